package store

import (
	"encoding/json"
	"testing"
)

func TestKnownPeakKey(t *testing.T) {
	for _, c := range []struct {
		k    string
		want bool
	}{
		{"cgroup_usage", true}, {"pss_total", true}, {"rss_total", true}, {"swap_total", true},
		{"alloc_allocated", true}, {"alloc_reserved", true},
		{"alloc_peak_allocated", true}, {"alloc_peak_reserved", true},
		{"gpu0_used", true}, {"gpu12_job_used", true}, {"gpu_pid_4127", true},
		{"gpu_used", false}, {"gpu-1_used", false}, {"gpu+1_used", false}, {"gpux_job_used", false},
		{"gpu_pid_", false}, {"alloc_peak", false}, {"psi_some_avg10", false}, {"shm_used", false}, {"", false},
	} {
		if got := KnownPeakKey(c.k); got != c.want {
			t.Errorf("KnownPeakKey(%q) = %v, want %v", c.k, got, c.want)
		}
	}
}

func TestPeakGPUKeys(t *testing.T) {
	if k := PeakGPUUsed(3); k != "gpu3_used" {
		t.Errorf("PeakGPUUsed: %q", k)
	}
	if k := PeakGPUJobUsed(3); k != "gpu3_job_used" {
		t.Errorf("PeakGPUJobUsed: %q", k)
	}
	if k := PeakGPUPID(4127); k != "gpu_pid_4127" {
		t.Errorf("PeakGPUPID: %q", k)
	}
	for k, want := range map[PeakKey]int{"gpu0_used": 0, "gpu11_used": 11, "gpu0_job_used": -1, "gpu_pid_7": -1, "cgroup_usage": -1} {
		i, ok := k.GPUUsedIndex()
		if ok != (want >= 0) || ok && i != want {
			t.Errorf("%q.GPUUsedIndex() = %d, %v; want %d", k, i, ok, want)
		}
	}
}

// Peaks is stored as it was when it was a map[string]int64: the same
// JSON both ways, so old databases read the same.
func TestPeaksJSON(t *testing.T) {
	const stored = `{"alloc_peak_allocated":0,"cgroup_usage":1049,"gpu0_used":77}`
	var p Peaks
	if err := json.Unmarshal([]byte(stored), &p); err != nil {
		t.Fatal(err)
	}
	p.Raise(PeakCgroupUsage, 10)
	p.Raise(PeakAllocPeakAllocated, 0)
	if v, ok := p.Get(PeakCgroupUsage); !ok || v != 1049 || p.Value(PeakPSSTotal) != 0 {
		t.Errorf("peaks %v", p)
	}
	if b, _ := json.Marshal(p); string(b) != stored {
		t.Errorf("JSON %s, want %s", b, stored)
	}
	p.Raise(PeakPSSTotal, 0)
	if _, ok := p.Get(PeakPSSTotal); !ok {
		t.Error("Raise with 0 did not record the key")
	}
}
