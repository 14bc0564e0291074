package oomexplain

import (
	"strings"
	"testing"
)

// Sources of testdata/host (verbatim; Markdown comment prefixes "# " or
// "# > " removed where the author had quoted the log):
//   dataloader-killed-chained.log       BiaPy FAQ (Windows/WSL training trace)
//   dataloader-bus-error*.log           timm training notes; a torchvision tutorial comment
//   shm-unexpected-bus-error.log        a Korean shm troubleshooting guide
//   too-many-open-files.log, oserror-emfile.log   a Chinese note; BiaPy FAQ
//   torchrun-sigkill*.log               llama2 issue notes; an Andromeda training log
//   slurm-*.log                         Slurm job outputs from public repositories
//   systemd-oomd.log                    a test fixture of a desktop-monitoring tool

func TestHostFailures(t *testing.T) {
	tests := []struct {
		file    string
		kinds   []Kind
		pids    []int
		count   int
		verdict Verdict
	}{
		{"host/dataloader-killed-chained.log", []Kind{KindDataLoaderKilled}, []int{1285}, 2, VerdictKilledSIGKILL},
		{"host/dataloader-bus-error.log", []Kind{KindSharedMemory}, []int{40931}, 1, VerdictSharedMemory},
		{"host/dataloader-bus-error-then-exit.log", []Kind{KindSharedMemory}, []int{56}, 1, VerdictSharedMemory},
		{"host/shm-unexpected-bus-error.log", []Kind{KindSharedMemory}, nil, 1, VerdictSharedMemory},
		{"host/too-many-open-files.log", []Kind{KindTooManyOpenFiles}, nil, 1, VerdictFDLimit},
		{"host/oserror-emfile.log", []Kind{KindTooManyOpenFiles}, nil, 1, VerdictFDLimit},
		{"host/torchrun-sigkill.log", []Kind{KindTorchrunSIGKILL}, []int{11127}, 1, VerdictKilledSIGKILL},
		{"host/torchrun-sigkill-rank4.log", []Kind{KindTorchrunSIGKILL}, []int{208585}, 1, VerdictKilledSIGKILL},
		// Detections in step .0 and in .batch: one incident each.
		{"host/slurm-dataloader.log", []Kind{KindDataLoaderKilled, KindSlurmOOM, KindSlurmOOM}, []int{191071}, 1, VerdictSlurmLimit},
		{"host/slurm-step-cgroup.log", []Kind{KindSlurmOOM}, nil, 1, VerdictSlurmLimit},
		{"host/systemd-oomd.log", []Kind{KindSystemdOOMD}, nil, 1, VerdictSystemdOOMD},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			incs := parseFile(t, tc.file)
			if len(incs) != len(tc.kinds) {
				t.Fatalf("got %d incidents, want %d: %+v", len(incs), len(tc.kinds), incs)
			}
			for i, k := range tc.kinds {
				if incs[i].Kind != k {
					t.Errorf("incident %d: kind %s, want %s", i, incs[i].Kind, k)
				}
			}
			inc := incs[0]
			if !equalInts(inc.PIDs, tc.pids) || inc.Count != tc.count {
				t.Errorf("pids %v count %d, want %v %d", inc.PIDs, inc.Count, tc.pids, tc.count)
			}
			if inc.Explanation.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s: %s", inc.Explanation.Verdict, tc.verdict, inc.Explanation.Summary)
			}
		})
	}
}

func TestHostFailureDetails(t *testing.T) {
	tr := parseFile(t, "host/torchrun-sigkill.log")[0]
	f := tr.Failure
	if !ptrEq(tr.Rank, 0) || tr.Host != "yan-ml" || !ptrEq(f.ExitCode, -9) || !ptrEq(f.SignalNumber, 9) || f.Signal != "SIGKILL" || !ptrEq(f.LocalRank, 0) {
		t.Errorf("torchrun: rank %v host %q failure %+v", tr.Rank, tr.Host, f)
	}
	if tr.Time == nil || tr.Time.Format("2006-01-02 15:04:05") != "2024-03-26 16:50:50" {
		t.Errorf("time from torchrun's logging prefix: %v", tr.Time)
	}
	if !strings.HasSuffix(f.Program, "/bin/python") {
		t.Errorf("program %q", f.Program)
	}
	r4 := parseFile(t, "host/torchrun-sigkill-rank4.log")[0]
	if !ptrEq(r4.Rank, 4) || r4.Host != "r1n2a6000bittensor" || r4.Failure.Program != "train.py" {
		t.Errorf("rank %v host %q program %q", r4.Rank, r4.Host, r4.Failure.Program)
	}
	fd := parseFile(t, "host/too-many-open-files.log")[0].Failure
	if fd.ShmObject != "/torch_735354_2766238047_18" || fd.Errno != "Too many open files" {
		t.Errorf("shm object %q errno %q", fd.ShmObject, fd.Errno)
	}
	sl := parseFile(t, "host/slurm-dataloader.log")
	if s := sl[1].Failure; s.JobID != "9209586" || s.StepID != "9209586.0" || !ptrEq(s.OOMEvents, 1) || sl[1].Count != 2 {
		t.Errorf("slurm %+v count %d", s, sl[1].Count)
	}
	if s := sl[2].Failure; s.JobID != "9209586" || s.StepID != "9209586.batch" || !ptrEq(s.OOMEvents, 1) || sl[2].Count != 1 {
		t.Errorf("slurm batch step %+v count %d", s, sl[2].Count)
	}
	if !equalInts(sl[0].Related, []int{1, 2}) {
		t.Errorf("DataLoader kill not tied to the Slurm event: %v", sl[0].Related)
	}
	oomd := parseFile(t, "host/systemd-oomd.log")[0]
	if oomd.Failure.Cgroup != "/user.slice/user-1000.slice/user@1000.service/app.slice/flatpak-session-helper.service" || oomd.Host != "host" || oomd.Time == nil {
		t.Errorf("oomd %+v host %q time %v", oomd.Failure, oomd.Host, oomd.Time)
	}
	if !strings.Contains(oomd.Failure.Reason, "memory pressure") {
		t.Errorf("reason %q", oomd.Failure.Reason)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The worker's signal handler prints the first line (to the same stderr),
// the main process raises the RuntimeError for the same worker a moment
// later (torch/utils/data/_utils/signal_handling.py, dataloader.py): one
// failure, with the pid of the second line.
func TestBusErrorToldTwiceIsOneIncident(t *testing.T) {
	log := "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n" +
		"Traceback (most recent call last):\n" +
		"  File \"/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py\", line 990, in _try_get_data\n" +
		"RuntimeError: DataLoader worker (pid 3301) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n" +
		"RuntimeError: DataLoader worker (pid(s) 3301) exited unexpectedly\n"
	incs, err := Parse(strings.NewReader(log), Options{Source: "train.log"})
	if err != nil || len(incs) != 1 {
		t.Fatalf("%v: %d incidents, want 1: %+v", err, len(incs), incs)
	}
	if incs[0].Kind != KindSharedMemory || !equalInts(incs[0].PIDs, []int{3301}) || incs[0].Count != 3 {
		t.Errorf("kind %s pids %v count %d", incs[0].Kind, incs[0].PIDs, incs[0].Count)
	}
}
