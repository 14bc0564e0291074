package oomexplain

import (
	"strings"
	"testing"
)

// Shell kill reports, copied from public sources:
//
//	016, 017, 026: testdata/corpus/host (GMTracker #11, ArjunaCluster/ArjunaUsers #52, spatial-transformer-GAN #35)
//	"[1]+  Killed ...": a face-detection project's README session log (emcoda, "python main.py")
//	"zsh: killed ...": a NetMF reproduction log ("python netmf.py --input data/flickr.mat"); a Command-R
//	  script's log with the report glued to its tqdm bar
func TestShellKilled(t *testing.T) {
	tests := []struct {
		name, text string
		pid        int
		program    string
	}{
		{"bare", "lr = 1.00e-05\nKilled\n", 0, ""},
		{"slurm script", `StdErr: "/var/spool/slurmd/job00191/slurm_script: line 28:  8156 Killed                  python3 main.py --prop hform --epochs 400` + "\n", 8156, "python3 main.py --prop hform --epochs 400"},
		{"script line", "./train.sh: line 1:  7364 Killed                  python3 train_Donly.py --name=D0 --warpN=0 --pertFG=0.2\n", 7364, "python3 train_Donly.py --name=D0 --warpN=0 --pertFG=0.2"},
		{"bash -c", "bash: line 1: 12345 Killed                  python train.py\n", 12345, "python train.py"},
		{"pid only", "943 Killed                  python train.py\n", 943, "python train.py"},
		{"job control", "[INFO] Training complete.\n[1]+  Killed                  python main.py\n", 0, "python main.py"},
		{"zsh job", "[1]  + 12345 killed     python train.py\n", 12345, "python train.py"},
		{"zsh", "2026-09-25 10:31:47,470 After filtering, max eigenvalue=1.000000, min eigenvalue=0.060157\nzsh: killed     python netmf.py --input data/flickr.mat --output embeddings/flickr.npy\n", 0, "python netmf.py --input data/flickr.mat --output embeddings/flickr.npy"},
		{"zsh glued", "Loading checkpoint shards:  33%|███▎      | 5/15 [02:32<05:36, 33.69s/it]zsh: killed     python3 commandR.py\n", 0, "python3 commandR.py"},
		{"tqdm glued", "Epoch 1:  12%|█▏        | 240/2000 [01:02<07:40,  3.82it/s]Killed\n", 0, ""},
		{"macOS", "Killed: 9\n", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			incs := parseString(t, tc.text)
			if len(incs) != 1 || incs[0].Kind != KindShellKilled {
				t.Fatalf("%d incidents %+v", len(incs), incs)
			}
			f := incs[0].Failure
			wantPIDs := []int(nil)
			if tc.pid != 0 {
				wantPIDs = []int{tc.pid}
			}
			if !equalInts(incs[0].PIDs, wantPIDs) || f.Program != tc.program || !ptrEq(f.SignalNumber, 9) {
				t.Errorf("pids %v program %q signal %v", incs[0].PIDs, f.Program, f.SignalNumber)
			}
		})
	}
}

func TestNotShellKilled(t *testing.T) {
	for name, text := range map[string]string{
		// aptos-labs/aptos-core #5318: the kernel's own line.
		"kernel": "Oct 26 23:03:07 kernel: [460422.616108] Out of memory: Killed process 62539 (aptos-node) total-vm:44755712kB, anon-rss:30949020kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:79900kB oom_score_adj:0\n",
		// corpus host/031 (yolov3 #..., PyTorch 1.0): the DataLoader's.
		"dataloader": "RuntimeError: DataLoader worker (pid 2064) is killed by signal: Killed.\n",
		// a kernel record with a timestamp is the kernel's, not a shell's
		"uptime": "[  816.908500] Killed\n",
		"prose":  "The process was Killed by the OOM killer.\n",
		"table":  "    mobsKilled: 92,\n",
		// corpus host/030 (microsoft/pai #5464): the shell's line quoted
		// inside a Kubernetes status message, with literal \n escapes.
		"quoted": `Pod failed: PodPattern matched: containers: - name: app reason: OOMKilled message: "nel_size=(1,)\n /usr/local/pai/runtime: line 30: 7 Killed ${RUNTIME_SCRIPT_DIR}/runtime_entry.sh\n" code: 137` + "\n",
	} {
		for _, inc := range parseString(t, text) {
			if inc.Kind == KindShellKilled {
				t.Errorf("%s: shell_killed from %q", name, text)
			}
		}
	}
	// A bare "Killed" inside a kernel report pasted from dmesg (a line of
	// the report wrapped after its first word) is the kernel's.
	s := readTestdata(t, "kernel/cgroup-v1-6.18.dmesg")
	lines := strings.SplitAfter(s, "\n")
	mid := len(lines) / 2
	s = strings.Join(lines[:mid], "") + "Killed\n" + strings.Join(lines[mid:], "")
	for _, inc := range parseString(t, s) {
		if inc.Kind != KindKernelOOM {
			t.Errorf("inside a kernel report: %s", inc.Kind)
		}
	}
}

func TestDataLoaderTemplates(t *testing.T) {
	tests := []struct {
		name, text string
		kinds      []Kind
	}{
		// corpus host/032 (Megatron, [rank0] prefix, trailing space after the period).
		{"killed", "[rank0]: RuntimeError: DataLoader worker (pid 9382) is killed by signal: Killed. \n", []Kind{KindDataLoaderKilled}},
		// the same, its period cut off by a paste
		{"killed cut", "RuntimeError: DataLoader worker (pid 9382) is killed by signal: Killed\n", []Kind{KindDataLoaderKilled}},
		{"exited", "RuntimeError: DataLoader worker (pid(s) 1234) exited unexpectedly\n", []Kind{KindDataLoaderExited}},
		// PyTorch's worker message, whole and wrapped after its first sentence.
		{"shm", "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n", []Kind{KindSharedMemory}},
		{"shm wrapped", "ERROR: Unexpected bus error encountered in worker.\nThis might be caused by insufficient shared memory (shm).\n", []Kind{KindSharedMemory}},
		{"shm alone", "This might be caused by insufficient shared memory (shm).\n", []Kind{KindSharedMemory}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			incs := parseString(t, tc.text)
			var got []Kind
			for _, i := range incs {
				got = append(got, i.Kind)
			}
			if strings.Join(kindStrings(got), ",") != strings.Join(kindStrings(tc.kinds), ",") {
				t.Errorf("got %v, want %v", got, tc.kinds)
			}
		})
	}
}

func kindStrings(ks []Kind) []string {
	var out []string
	for _, k := range ks {
		out = append(out, string(k))
	}
	return out
}
