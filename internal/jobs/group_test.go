package jobs

import (
	"reflect"
	"testing"
)

func py(pid, ppid int, torch bool, args ...string) Proc {
	return Proc{PID: pid, PPid: ppid, Name: "python3", Cmdline: args, Torch: torch}
}

func TestGroup(t *testing.T) {
	train := []string{"/usr/bin/python3", "train.py"}
	procs := []Proc{
		{PID: 1, Name: "systemd", Cmdline: []string{"/sbin/init"}},
		{PID: 100, PPid: 1, Name: "bash", Cmdline: []string{"bash"}},
		// torchrun -> two ranks, rank 0 with two DataLoader workers and a compiler child.
		{PID: 200, PPid: 100, Name: "torchrun", Cmdline: []string{"/usr/bin/torchrun", "train.py"}, Torch: true},
		py(210, 200, true, train...),
		py(211, 200, true, train...),
		py(220, 210, true, train...),
		py(221, 210, true, train...),
		{PID: 230, PPid: 210, Name: "cc1plus", Cmdline: []string{"cc1plus"}},
		// A GPU process that is not Python (a CUDA binary).
		{PID: 300, PPid: 100, Name: "gpu-burn", Cmdline: []string{"./gpu-burn"}, GPU: true},
		// Plain Python without torch: not a job.
		py(400, 100, false, "python3", "-m", "http.server"),
		// A spawned worker whose parent vanished: its own job.
		py(500, 999, true, "python3", "-c", "from multiprocessing.spawn import spawn_main"),
	}
	got := Group(procs)
	want := []Tree{
		{RootPID: 200, Members: []Member{
			{200, 0, RoleMain}, {210, 1, RoleChild}, {220, 2, RoleWorker}, {221, 2, RoleWorker},
			{230, 2, RoleChild}, {211, 1, RoleChild},
		}},
		{RootPID: 300, Members: []Member{{300, 0, RoleMain}}},
		{RootPID: 500, Members: []Member{{500, 0, RoleMain}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Group =\n%+v\nwant\n%+v", got, want)
	}
}

// Ranks are not forks of torchrun (different command line): torchrun's
// children are workers only if they share its command line.
func TestRoleSpawn(t *testing.T) {
	parent := py(1, 0, true, "python3", "train.py")
	if r := Role(py(2, 1, true, "python3", "-c", "from multiprocessing.spawn import spawn_main; spawn_main()"), parent); r != RoleWorker {
		t.Errorf("spawn child role %q", r)
	}
	if r := Role(Proc{PID: 3, PPid: 1, Name: "sh", Cmdline: []string{"sh", "-c", "nvidia-smi"}}, parent); r != RoleChild {
		t.Errorf("shell child role %q", r)
	}
}

func TestCycleDoesNotHang(t *testing.T) {
	procs := []Proc{py(1, 2, true, "a"), py(2, 1, true, "a")}
	_ = Group(procs) // must return
}

func TestDetectors(t *testing.T) {
	if !LooksLikePython("python3.11", nil) || !LooksLikePython("x", []string{"/opt/conda/bin/python", "a.py"}) || LooksLikePython("bash", []string{"bash"}) {
		t.Error("LooksLikePython")
	}
	if !IsTorchCmdline([]string{"/usr/bin/python3", "-m", "torch.distributed.run", "x.py"}) || !IsTorchCmdline([]string{"/x/bin/torchrun", "a"}) || IsTorchCmdline([]string{"python3", "a.py"}) {
		t.Error("IsTorchCmdline")
	}
}

func TestTotal(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	g := int64(4 << 30)
	age := 2.5
	j := Job{Processes: []Process{
		{PID: 1, Role: RoleMain, RSSBytes: u(100), PSSBytes: u(80), USSBytes: u(70), PSSSource: SourceSmapsRollup, PSSAgeSeconds: &age, GPUBytes: &g, SwapBytes: u(5)},
		{PID: 2, Role: RoleWorker, RSSBytes: u(100), PSSBytes: u(20), USSBytes: u(10), PSSSource: SourceSmapsRollup},
		{PID: 3, Role: RoleWorker, RSSBytes: u(100)},
	}}
	j.Total("nvml")
	tt := j.Totals
	if tt.RSSBytes != 300 || tt.PSSBytes != 100 || tt.USSBytes != 80 || tt.SwapBytes != 5 || tt.GPUBytes != g || tt.Workers != 2 || tt.PSSComplete || tt.PSSMaxAgeSeconds != 2.5 {
		t.Errorf("totals = %+v", tt)
	}
	if tt.Sources["gpu"] != "nvml" || tt.Sources["pss"] != "smaps_rollup" || tt.Sources["rss"] != "status" {
		t.Errorf("sources = %v", tt.Sources)
	}
}
