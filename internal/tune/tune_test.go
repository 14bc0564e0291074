package tune

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// centos7Root copies the doctor's CentOS 7-like fixture into one root tree
// (<root>/proc, <root>/sys, <root>/etc) and adds the /etc files a CentOS
// host has where tune writes.
func centos7Root(t *testing.T, tuned bool) string {
	t.Helper()
	root := t.TempDir()
	src := "../doctor/testdata/centos7"
	for _, m := range [][2]string{{"proc", "proc"}, {"sys", "sys"}, {"root/etc", "etc"}} {
		cmd := exec.Command("cp", "-a", filepath.Join(src, m[0]), filepath.Join(root, m[1]))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
	}
	write(t, root, "etc/security/limits.d/20-nproc.conf", "*          soft    nproc     4096\nroot       soft    nproc     unlimited\n", 0o644)
	// A file of the same name from an earlier hand edit: must come back byte for byte, mode included.
	write(t, root, "etc/sysctl.d/90-torchmem.conf", "vm.swappiness = 20\n", 0o600)
	if tuned {
		write(t, root, "etc/tuned/active_profile", "virtual-guest\n", 0o644)
		write(t, root, "usr/sbin/tuned-adm", "#!/bin/sh\n", 0o755)
	}
	return root
}

func write(t *testing.T, root, rel, content string, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// hashTree fingerprints every path, mode, content and link of a tree.
func hashTree(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		line := fmt.Sprintf("%s %v", rel, info.Mode())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			line += " -> " + l
		case info.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func fixedNow() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }

func TestApplyRevertByteIdentical(t *testing.T) {
	for _, tuned := range []bool{false, true} {
		for _, profile := range []string{"training", "inference"} {
			t.Run(fmt.Sprintf("%s/tuned=%v", profile, tuned), func(t *testing.T) {
				root := centos7Root(t, tuned)
				before := hashTree(t, root)
				opts := Options{Root: root, Now: fixedNow}
				p, err := MakePlan(opts, profile)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := Apply(opts, p); err != nil {
					t.Fatal(err)
				}
				if hashTree(t, root) == before {
					t.Fatal("apply changed nothing")
				}
				checkApplied(t, root, profile, tuned)
				st, err := Status(opts)
				if err != nil || !st.Applied || st.Drifted {
					t.Fatalf("status after apply: %+v %v", st, err)
				}
				if _, err := Apply(opts, p); err == nil || !strings.Contains(err.Error(), "already applied") {
					t.Errorf("second apply: %v", err)
				}
				if _, err := Revert(opts); err != nil {
					t.Fatal(err)
				}
				if after := hashTree(t, root); after != before {
					t.Errorf("tree differs after revert:\nbefore:\n%s\nafter:\n%s", before, after)
				}
				if _, err := Revert(opts); !errors.Is(err, ErrNotApplied) {
					t.Errorf("second revert: %v", err)
				}
			})
		}
	}
}

func checkApplied(t *testing.T, root, profile string, tuned bool) {
	t.Helper()
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := map[string]string{"training": "10\n", "inference": "1\n"}[profile]
	if got := read("proc/sys/vm/swappiness"); got != want {
		t.Errorf("live swappiness %q, want %q", got, want)
	}
	if got := read("sys/kernel/mm/transparent_hugepage/enabled"); got != "always [madvise] never\n" {
		t.Errorf("live THP %q", got)
	}
	if got := read("proc/sys/kernel/numa_balancing"); got != "0\n" {
		t.Errorf("numa_balancing on a 2-node host: %q", got)
	}
	conf := read("etc/sysctl.d/90-torchmem.conf")
	if !strings.Contains(conf, "vm.swappiness = "+strings.TrimSpace(want)) || !strings.Contains(conf, "kernel.pid_max = 4194304") {
		t.Errorf("sysctl.d:\n%s", conf)
	}
	if lim := read("etc/security/limits.d/90-torchmem.conf"); !strings.Contains(lim, "*    soft nofile   65536") || !strings.Contains(lim, "memlock  unlimited") {
		t.Errorf("limits.d:\n%s", lim)
	}
	if tuned {
		tc := read("etc/tuned/torchmem-" + profile + "/tuned.conf")
		if !strings.Contains(tc, "include=virtual-guest") || !strings.Contains(tc, "transparent_hugepages=madvise") || !strings.Contains(tc, "[sysctl]") {
			t.Errorf("tuned profile:\n%s", tc)
		}
		return
	}
	if unit := read("etc/systemd/system/torchmem-thp.service"); !strings.Contains(unit, "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled") {
		t.Errorf("unit:\n%s", unit)
	}
	if l, err := os.Readlink(filepath.Join(root, THPUnitWants)); err != nil || l != "../torchmem-thp.service" {
		t.Errorf("unit not enabled: %q %v", l, err)
	}
}

// A step that fails halfway rolls back what was done: the tree is as before.
func TestApplyRollsBack(t *testing.T) {
	root := centos7Root(t, false)
	opts := Options{Root: root, Now: fixedNow}
	p, err := MakePlan(opts, "training")
	if err != nil {
		t.Fatal(err)
	}
	// The host changed between plan and apply: the kernel no longer offers
	// madvise, so the THP step fails after the files and sysctls were written.
	write(t, root, "sys/kernel/mm/transparent_hugepage/enabled", "[always] never\n", 0o644)
	before := hashTree(t, root)
	_, err = Apply(opts, p)
	if err == nil || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("apply: %v", err)
	}
	if after := hashTree(t, root); after != before {
		t.Errorf("not rolled back:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// A path that cannot even be snapshotted fails before any change.
	if err := os.RemoveAll(filepath.Join(root, "etc/security/limits.d")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "etc/security/limits.d", "not a directory\n", 0o644)
	write(t, root, "sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n", 0o644)
	before = hashTree(t, root)
	if p, err = MakePlan(opts, "training"); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(opts, p); err == nil || hashTree(t, root) != before {
		t.Errorf("apply into a broken tree: %v, tree changed: %v", err, hashTree(t, root) != before)
	}
}

func TestPlanKeepsWhatIsFine(t *testing.T) {
	root := centos7Root(t, false)
	write(t, root, "proc/sys/vm/swappiness", "5\n", 0o644)
	write(t, root, "sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n", 0o644)
	p, err := MakePlan(Options{Root: root}, "training")
	if err != nil {
		t.Fatal(err)
	}
	act := map[string]string{}
	for _, c := range p.Changes {
		act[c.Key] = c.Action
	}
	want := map[string]string{"vm.swappiness": ActKeep, "thp.enabled": ActKeep, "thp.defrag": ActSet,
		"kernel.pid_max": ActSet, "vm.overcommit_memory": ActKeep, "limits.nofile": ActSet, "dev.shm": ActKeep}
	for k, v := range want {
		if act[k] != v {
			t.Errorf("%s: %s, want %s", k, act[k], v)
		}
	}
	if _, err := MakePlan(Options{Root: root}, "gaming"); err == nil {
		t.Error("unknown profile accepted")
	}
	// A bad --persist is refused even when no THP setting changes.
	write(t, root, "sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never\n", 0o644)
	if _, err := MakePlan(Options{Root: root, Persist: "bogus"}, "training"); err == nil || !strings.Contains(err.Error(), `--persist "bogus"`) {
		t.Errorf("--persist bogus: %v", err)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	root := centos7Root(t, false)
	before := hashTree(t, root)
	opts := Options{Root: root, DryRun: true, Now: fixedNow}
	p, _ := MakePlan(opts, "training")
	j, err := Apply(opts, p)
	if err != nil || j == nil || len(j.Live) == 0 {
		t.Fatalf("dry run: %+v %v", j, err)
	}
	if hashTree(t, root) != before {
		t.Error("dry run changed the tree")
	}
}

func TestStatusDrift(t *testing.T) {
	root := centos7Root(t, false)
	opts := Options{Root: root, Now: fixedNow}
	p, _ := MakePlan(opts, "training")
	if _, err := Apply(opts, p); err != nil {
		t.Fatal(err)
	}
	write(t, root, "proc/sys/vm/swappiness", "60\n", 0o644)
	st, err := Status(opts)
	if err != nil || !st.Drifted {
		t.Fatalf("drift not seen: %+v %v", st, err)
	}
	for _, it := range st.Live {
		if it.Key == "vm.swappiness" && (!it.Drift || it.Now != "60") {
			t.Errorf("%+v", it)
		}
	}
}

// revert writes every path of the journal and runs its undo commands: an
// edited journal naming anything else is refused, and nothing is written.
func TestTamperedJournalRefused(t *testing.T) {
	for name, edit := range map[string]func(j *Journal){
		"live path":    func(j *Journal) { j.Live[0].Path = "/proc/sys/../../etc/shadow" },
		"file path":    func(j *Journal) { j.Files[0].Path = "/root/.ssh/authorized_keys" },
		"undo command": func(j *Journal) { j.Undo = [][]string{{"sh", "-c", "id"}} },
	} {
		t.Run(name, func(t *testing.T) {
			root := centos7Root(t, false)
			opts := Options{Root: root, Now: fixedNow}
			p, _ := MakePlan(opts, "training")
			if _, err := Apply(opts, p); err != nil {
				t.Fatal(err)
			}
			j, err := ReadJournal(opts)
			if err != nil {
				t.Fatal(err)
			}
			edit(j)
			b, _ := json.Marshal(j)
			write(t, root, JournalFile, string(b), 0o600)
			before := hashTree(t, root)
			if _, err := Revert(opts); err == nil {
				t.Error("tampered journal accepted")
			}
			if hashTree(t, root) != before {
				t.Error("revert of a refused journal changed the tree")
			}
		})
	}
}

// TestPlanWordsLimits: a limit kept because it is already enough says so
// (not a bare "now 20000, target 65536, keep"), and memlock's byte count
// reads in IEC units while JSON keeps the exact number.
func TestPlanWordsLimits(t *testing.T) {
	root := centos7Root(t, false)
	limits := "Limit                     Soft Limit           Hard Limit           Units     \n" +
		"Max processes             96364                96364                processes \n" +
		"Max open files            20000                1048576              files     \n" +
		"Max locked memory         8388608              8388608              bytes     \n"
	write(t, root, "proc/self/limits", limits, 0o644)
	p, err := MakePlan(Options{Root: root}, "training")
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Change{}
	for _, c := range p.Changes {
		by[c.Key] = c
	}
	if c := by["limits.nofile"]; c.Action != ActKeep || c.Note != "already enough (at least 4096)" {
		t.Errorf("nofile: action %s note %q", c.Action, c.Note)
	}
	if c := by["limits.memlock"]; c.Current != "8388608" || c.CurrentText() != "8.00 MiB" || c.Action != ActSet {
		t.Errorf("memlock: current %q text %q action %s", c.Current, c.CurrentText(), c.Action)
	}
	if c := by["vm.swappiness"]; c.CurrentText() != c.Current {
		t.Errorf("a sysctl's text changed: %q", c.CurrentText())
	}
}
