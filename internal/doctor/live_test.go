package doctor

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/units"
)

// TestLiveHost runs the whole audit on this machine and checks the values
// it reports against sysctl, the shell's ulimit and df.
func TestLiveHost(t *testing.T) {
	if _, err := os.Stat("/proc/self/limits"); err != nil {
		t.Skip("no /proc on this machine")
	}
	b, notice := gpu.Open(gpu.Options{})
	defer b.Close()
	h := &Host{ProcRoot: "/proc", SysRoot: "/sys", Root: "/", GPU: b, GPUNotice: notice, Getenv: os.Getenv, UID: os.Getuid()}
	rep := Run(h, Checks())
	byID := map[string]Finding{}
	for _, f := range rep.Findings {
		byID[f.ID] = f
	}
	sh := func(cmd string) string {
		out, err := exec.Command("bash", "-c", cmd).Output()
		if err != nil {
			t.Skipf("%s: %v", cmd, err)
		}
		return strings.TrimSpace(string(out))
	}
	for id, sysctl := range map[string]string{"vm.swappiness": "vm.swappiness", "vm.overcommit_memory": "vm.overcommit_memory", "vm.min_free_kbytes": "vm.min_free_kbytes", "kernel.pid_max": "kernel.pid_max"} {
		if _, err := exec.LookPath("sysctl"); err != nil {
			t.Skip("no sysctl")
		}
		want := sh("sysctl -n " + sysctl)
		if got := byID[id].Evidence[0].Value; got != want {
			t.Errorf("%s: doctor read %q, sysctl -n says %q", id, got, want)
		}
	}
	for id, flag := range map[string]string{"ulimit.nproc": "-u", "ulimit.nofile": "-n"} {
		want := sh("ulimit -S " + flag)
		if !strings.Contains(byID[id].Title, "is "+want+" (soft)") {
			t.Errorf("%s: %q, but ulimit -S %s says %s", id, byID[id].Title, flag, want)
		}
	}
	if df, err := exec.Command("df", "-B1", "--output=size", "/dev/shm").Output(); err == nil {
		lines := strings.Fields(string(df))
		size, _ := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		// tmpfs rounds size= to pages; doctor shows it with units.Bytes.
		if want := "/dev/shm is " + units.Bytes(size); byID["dev.shm"].Title != want {
			t.Errorf("dev.shm: %q, df says %q", byID["dev.shm"].Title, want)
		}
	}
	thp := sh("cat /sys/kernel/mm/transparent_hugepage/enabled")
	if sel := byID["thp.enabled"].Evidence[0].Value; !strings.Contains(thp, "["+sel+"]") {
		t.Errorf("thp.enabled %q, sysfs says %q", sel, thp)
	}
	// Other tests on this machine OOM-kill on purpose: the count may only grow.
	if now, _ := strconv.Atoi(sh("awk '/^oom_kill /{print $2}' /proc/vmstat")); now > 0 {
		var seen int
		if byID["oom.history"].Title == "no kernel OOM kill since boot" {
			seen = 1 // the first kill happened after the doctor read
		} else if _, err := fmt.Sscanf(byID["oom.history"].Title, "kernel OOM killer fired %d", &seen); err != nil || seen > now || seen == 0 {
			t.Errorf("oom.history %q, vmstat now says %d", byID["oom.history"].Title, now)
		}
	}
	t.Logf("live: %d findings, worst %s, exit %d", len(rep.Findings), rep.Worst, rep.ExitCode())
}
