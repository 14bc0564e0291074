package tune

import (
	"path/filepath"
	"testing"

	"github.com/torchmem/torchmem/internal/doctor"
	"github.com/torchmem/torchmem/internal/gpu"
)

// After apply, the doctor reading the same tree finds the live settings
// it warned about fixed; after revert, the warnings are back.
func TestDoctorAgreesAfterApply(t *testing.T) {
	root := centos7Root(t, false)
	sev := func() map[string]doctor.Severity {
		h := &doctor.Host{ProcRoot: filepath.Join(root, "proc"), SysRoot: filepath.Join(root, "sys"), Root: root, GPU: gpu.NewNoop()}
		out := map[string]doctor.Severity{}
		for _, f := range doctor.Run(h, doctor.Checks()).Findings {
			out[f.ID] = f.Severity
		}
		return out
	}
	live := []string{"vm.swappiness", "thp.enabled", "thp.defrag", "kernel.pid_max"}
	before := sev()
	for _, id := range live {
		if before[id] != doctor.Warn {
			t.Fatalf("fixture: %s is %s, want warn", id, before[id])
		}
	}
	opts := Options{Root: root, Now: fixedNow}
	p, err := MakePlan(opts, "training")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(opts, p); err != nil {
		t.Fatal(err)
	}
	after := sev()
	for _, id := range live {
		if after[id] != doctor.OK {
			t.Errorf("after apply: %s is %s, want ok", id, after[id])
		}
	}
	if _, err := Revert(opts); err != nil {
		t.Fatal(err)
	}
	for id, s := range sev() {
		if s != before[id] {
			t.Errorf("after revert: %s is %s, was %s", id, s, before[id])
		}
	}
}
