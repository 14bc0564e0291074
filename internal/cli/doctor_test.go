package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func doctorFixture(t *testing.T, tree string) {
	t.Helper()
	dir := "../doctor/testdata/" + tree
	t.Setenv("TORCHMEM_PROC_ROOT", dir+"/proc")
	t.Setenv("TORCHMEM_SYS_ROOT", dir+"/sys")
	t.Setenv("TORCHMEM_ROOT", dir+"/root")
	t.Setenv("PYTORCH_CUDA_ALLOC_CONF", "")
	t.Setenv("PYTORCH_ALLOC_CONF", "")
	t.Setenv("CUDA_MODULE_LOADING", "")
}

func TestDoctorExitCodes(t *testing.T) {
	doctorFixture(t, "centos7")
	out, _, code := runCLI(t, "doctor", "--no-python", "--json")
	if code != 2 {
		t.Errorf("centos7: exit %d, want 2 (ulimit -n 1024 fails)", code)
	}
	var rep struct {
		Worst    string `json:"worst"`
		Findings []struct {
			ID, Severity string
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Worst != "fail" || len(rep.Findings) < 20 {
		t.Fatalf("json: %v, worst %q, %d findings", err, rep.Worst, len(rep.Findings))
	}
	// Only the kernel checks: THP always and swappiness 30 warn, nothing fails.
	out, _, code = runCLI(t, "doctor", "--no-python", "--only", "kernel")
	if code != 1 || !strings.Contains(out, "[WARN] thp.enabled") || strings.Contains(out, "ulimit") {
		t.Errorf("--only kernel: exit %d\n%s", code, out)
	}
	// A setting fixed: the same tree with only ok/info findings exits 0.
	_, _, code = runCLI(t, "doctor", "--no-python", "--only", "cgroup,numa.nodes")
	if code != 0 {
		t.Errorf("--only cgroup: exit %d, want 0", code)
	}
	out, _, code = runCLI(t, "doctor", "--list")
	if code != 0 || !strings.Contains(out, "vm.swappiness\n") {
		t.Errorf("--list: %d %q", code, out)
	}
}

// --only takes check ids (thp makes thp.enabled and thp.defrag) and id
// prefixes; a typo is an error, not an empty report that passes.
func TestDoctorOnlyAndNoPython(t *testing.T) {
	doctorFixture(t, "centos7")
	out, _, code := runCLI(t, "doctor", "--no-python", "--only", "thp")
	if code != 1 || !strings.Contains(out, "thp.enabled") || !strings.Contains(out, "thp.defrag") {
		t.Errorf("--only thp: exit %d\n%s", code, out)
	}
	out, _, _ = runCLI(t, "doctor", "--no-python", "--only", "vm")
	if !strings.Contains(out, "vm.swappiness") || !strings.Contains(out, "vm.min_free_kbytes") || strings.Contains(out, "thp.") {
		t.Errorf("--only vm:\n%s", out)
	}
	_, errOut, code := runCLI(t, "doctor", "--no-python", "--only", "thpp")
	if code != 1 || !strings.Contains(errOut, `--only "thpp"`) {
		t.Errorf("--only thpp: exit %d, stderr %q", code, errOut)
	}
	out, _, _ = runCLI(t, "doctor", "--no-python", "--only", "pytorch.versions")
	if !strings.Contains(out, "skipped (--no-python)") || strings.Contains(out, "could not be run") {
		t.Errorf("--no-python:\n%s", out)
	}
}

// The pointer to tune is shown only when tune can fix something shown.
func TestDoctorTuneHint(t *testing.T) {
	doctorFixture(t, "centos7")
	if out, _, _ := runCLI(t, "doctor", "--no-python", "--only", "vm.swappiness"); !strings.Contains(out, "torchmem tune plan") {
		t.Errorf("swappiness warning without the tune hint:\n%s", out)
	}
	t.Setenv("PYTORCH_CUDA_ALLOC_CONF", "foo:1")
	if out, _, _ := runCLI(t, "doctor", "--no-python", "--only", "pytorch.alloc_conf"); strings.Contains(out, "torchmem tune plan") {
		t.Errorf("tune hint for a PyTorch variable tune does not set:\n%s", out)
	}
}
