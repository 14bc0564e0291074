package oomexplain

import (
	"fmt"
	"strings"
	"testing"
)

// Real text from the corpus (testdata/corpus/host), one shape per case.

// hostFields renders what a host incident holds, for comparison.
func hostFields(inc *Incident) string {
	f := inc.Failure
	s := fmt.Sprintf("%s pids=%v", inc.Kind, inc.PIDs)
	if inc.Rank != nil {
		s += fmt.Sprintf(" rank=%d", *inc.Rank)
	}
	if f.LocalRank != nil {
		s += fmt.Sprintf(" local=%d", *f.LocalRank)
	}
	if f.ExitCode != nil {
		s += fmt.Sprintf(" exit=%d", *f.ExitCode)
	}
	if f.Signal != "" {
		s += " signal=" + f.Signal
	}
	if f.JobID != "" || f.StepID != "" {
		s += " job=" + f.JobID + " step=" + f.StepID
	}
	if f.OOMKilled != nil {
		s += fmt.Sprintf(" oomkilled=%v", *f.OOMKilled)
	}
	if f.Cgroup != "" {
		s += " cgroup=" + f.Cgroup
	}
	if f.OOMEvents != nil && inc.Kind == KindSystemdOOMD {
		s += fmt.Sprintf(" killed=%d", *f.OOMEvents)
	}
	return s
}

func TestHostParsesRealShapes(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{
			name: "failure table cut above its header; the first entry is only its traceback (host/008)",
			text: "  traceback : Signal 7 (SIGBUS) received by PID 16614\n" +
				"[5]:\n" +
				"  time      : 2024-01-16_18:04:01\n" +
				"  host      : lexun-1\n" +
				"  rank      : 6 (local_rank: 6)\n" +
				"  exitcode  : -7 (pid: 16615)\n" +
				"  error_file: <N/A>\n" +
				"  traceback : Signal 7 (SIGBUS) received by PID 16615\n" +
				"------------------------------------------------------------\n" +
				"Root Cause (first observed failure):\n" +
				"[0]:\n" +
				"  time      : 2024-01-16_18:04:01\n" +
				"  host      : lexun-1\n" +
				"  rank      : 0 (local_rank: 0)\n" +
				"  exitcode  : -7 (pid: 16609)\n" +
				"  error_file: <N/A>\n" +
				"  traceback : Signal 7 (SIGBUS) received by PID 16609\n" +
				"============================================================\n" +
				"srun: error: lexun-1: task 0: Exited with exit code 1\n",
			want: []string{
				"shared_memory pids=[16614] signal=SIGBUS",
				"shared_memory pids=[16615] rank=6 local=6 exit=-7 signal=SIGBUS",
				"shared_memory pids=[16609] rank=0 local=0 exit=-7 signal=SIGBUS",
			},
		},
		{
			name: "an entry's SIGTERM does not leak into the SIGKILL before it (host/041)",
			text: "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n" +
				"Failures:\n" +
				"[2]:\n" +
				"  time      : 2026-09-07_13:03:29\n" +
				"  host      : localhost\n" +
				"  rank      : 0 (local_rank: 0)\n" +
				"  exitcode  : -9 (pid: 14689)\n" +
				"  error_file: <N/A>\n" +
				"  traceback : Signal 9 (SIGKILL) received by PID 14689\n" +
				"[3]:\n" +
				"  time      : 2026-09-07_13:03:29\n" +
				"  host      : localhost\n" +
				"  rank      : 2 (local_rank: 2)\n" +
				"  exitcode  : -15 (pid: 14691)\n" +
				"  error_file: <N/A>\n" +
				"  traceback : Signal 15 (SIGTERM) received by PID 14691\n",
			want: []string{"torchrun_child_killed pids=[14689] rank=0 local=0 exit=-9 signal=SIGKILL"},
		},
		{
			name: "a retyped table: fields run together, 'signal' in lower case (host/052)",
			text: "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n" +
				"experiments/supervised HO3D V2.py FAILED\n" +
				"Failures:\n" +
				"<NO OTHER FAILURES>\n" +
				"Root Cause (first observed failure) :\n" +
				"[0]:\n" +
				"time\n" +
				"host\n" +
				"2023-09-14 01:45:50\n" +
				"ding-X10DRG\n" +
				"rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>\n" +
				"traceback : signal 9 (SIGKILL) received by PID 36071\n",
			want: []string{"torchrun_child_killed pids=[36071] rank=2 local=2 exit=-9 signal=SIGKILL"},
		},
		{
			name: "the exit code is read inside a line only in an open table",
			text: "rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>\n",
		},
		{
			name: "mp.spawn, 1.x wording (host/033)",
			text: "    (error_index, name)\nException: process 1 terminated with signal SIGKILL\n",
			want: []string{"torchrun_child_killed pids=[] local=1 signal=SIGKILL"},
		},
		{
			name: "mp.spawn, ProcessExitedException (host/034)",
			text: "    signal_name=name\ntorch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGKILL\n",
			want: []string{"torchrun_child_killed pids=[] local=0 signal=SIGKILL"},
		},
		{
			name: "mp.spawn, a child that exited is no memory incident",
			text: "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with exit code 1\n",
		},
		{
			name: "Slurm's accounting poll names the job (host/039)",
			text: "slurmstepd: Job 1171978 exceeded memory limit (18202456 > 16384000), being killed\n" +
				"slurmstepd: *** JOB 1171978 ON cuda-24-0 CANCELLED AT 2018-10-16T13:24:27 ***\n" +
				"slurmstepd: Exceeded step memory limit at some point.\n",
			want: []string{"slurm_oom_kill pids=[] job=1171978 step="},
		},
		{
			name: "the same with 'error:' and training output between (host/040)",
			text: "Epoch 0 |   Training | Elapsed Time: 0:00:15 | Steps: 93 | Loss: 24.580695\n" +
				"slurmstepd: error: Job 7518 exceeded memory limit (626359956 > 512000000), being killed\n" +
				"slurmstepd: error: Exceeded job memory limit\n" +
				"slurmstepd: error: *** JOB 7518 ON xantipa CANCELLED AT 2022-06-10T17:11:35 ***\n",
			want: []string{"slurm_oom_kill pids=[] job=7518 step="},
		},
		{
			name: "the step from srun's line after the limit lines (host/042)",
			text: "slurmstepd: error: Exceeded job memory limit at some point.\n" +
				"srun: error: udc-ba26-19: task 0: Out Of Memory\n" +
				"srun: Terminating job step 2750598.0\n" +
				"slurmstepd: error: Exceeded job memory limit at some point.\n",
			want: []string{"slurm_oom_kill pids=[] job=2750598 step=2750598.0"},
		},
		{
			name: "detections in a step and in the batch step are two; srun's task line joins the step's (host/055)",
			text: "slurmstepd-gpu20-15: error: Detected 1 oom-kill event(s) in StepId=9411285.0. Some of your processes may have been killed by the cgroup out-of-memory handler.\n" +
				"srun: error: gpu20-15: task 0: Out Of Memory\n" +
				"srun: launch/slurm: _step_signal: Terminating StepId=9411285.0\n" +
				"slurmstepd-gpu20-15: error: *** STEP 9411285.0 ON gpu20-15 CANCELLED AT 2022-05-17T17:58:10 ***\n" +
				"/home/user/utils/anaconda3/envs/knet/lib/python3.7/multiprocessing/semaphore_tracker.py:144: UserWarning: semaphore_tracker: There appear to be 56 leaked semaphores to clean up at shutdown\n" +
				"  len(cache))\n" +
				"slurmstepd-gpu20-15: error: Detected 1 oom-kill event(s) in StepId=9411285.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.\n",
			want: []string{"slurm_oom_kill pids=[] job=9411285 step=9411285.0", "slurm_oom_kill pids=[] job=9411285 step=9411285.batch"},
		},
		{
			name: "a step's detection repeated is one",
			text: "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=9411285.0. Some of your processes may have been killed by the cgroup out-of-memory handler.\n" +
				"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=9411285.0. Some of your processes may have been killed by the cgroup out-of-memory handler.\n",
			want: []string{"slurm_oom_kill pids=[] job=9411285 step=9411285.0"},
		},
		{
			name: "systemd-oomd's newer wording: 'Marked ... for killing', the pid just before (host/058)",
			text: "    [   77.740597] systemd-oomd[659]: Memory pressure for /system.slice is 85.03% > 80.00% for > 2s with reclaim activity\n" +
				"    [   77.745326] TEST-55-OOMD.sh[1292]: + journalctl --sync\n" +
				"    [   77.749125] systemd-oomd[659]: Considered 19 cgroups for killing, top candidates were:\n" +
				"    [   77.749128] systemd-oomd[659]:         Path: /system.slice/systemd-journald.service\n" +
				"    [   77.749134] systemd-oomd[659]:                 Current Memory Usage: 55.5M\n" +
				"    [   77.749597] systemd-oomd[659]: oomd attempting to kill 407 with KILL\n" +
				"    [   77.749670] systemd-oomd[659]: Marked /system.slice/systemd-journald.service for killing due to memory pressure for /system.slice being 85.03% > 80.00% for > 2s with reclaim activity\n" +
				"    [   77.752252] systemd[1]: systemd-journald.service: systemd-oomd killed 1 process(es) in this unit.\n",
			want: []string{"systemd_oomd_kill pids=[407] cgroup=/system.slice/systemd-journald.service killed=1"},
		},
		{
			name: "a pid named long before the kill line is not its own",
			text: "systemd-oomd[659]: oomd attempting to kill 407 with KILL\n" + strings.Repeat("systemd-oomd[659]: Memory pressure for /system.slice is 5.00% > 80.00%\n", 30) +
				"systemd-oomd[659]: Killed /system.slice/a.service due to memory pressure for /system.slice being 85.03% > 80.00% for > 2s with reclaim activity\n",
			want: []string{"systemd_oomd_kill pids=[] cgroup=/system.slice/a.service"},
		},
		{
			name: "Kubernetes pod status quoted by OpenPAI: reason OOMKilled, code 137 on one line (host/030)",
			text: "Exit Code: -1200\n" +
				"Exit Type: USER_FAILURE\n" +
				"Exit Reason: User Container killed by docker due to it exceeded the request memory\n" +
				`Pod failed: PodPattern matched: containers: - name: app reason: OOMKilled message: "nel_size=(1,), stride=(1,), bias=False)\n (6): ReLU()\n )\n)\n2021-04-30 07:10:43,386 INFO *****Start training waymo_models/pv_rcnn(default)***** /usr/local/pai/runtime: line 30: 7 Killed ${RUNTIME_SCRIPT_DIR}/runtime_entry.sh\n" code: 137` + "\n",
			want: []string{"container_killed pids=[] exit=137 signal=SIGKILL oomkilled=true"},
		},
		{
			name: "docker inspect State: ExitCode 137 above OOMKilled false (host/035)",
			text: "`State:{\nDead:false,\nError:\"\",\nExitCode:137,\nFinishedAt:\"2025-05-30T21:45:11.910895562Z\",\nOOMKilled:false,\nPaused:false,\nPid:0,\nStatus:\"exited\"\n}`\n",
			want: []string{"container_killed pids=[] exit=137 signal=SIGKILL oomkilled=false"},
		},
		{
			name: "kubectl describe pod: the exit code below the reason",
			text: "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n      Started:      Mon, 01 Jan 2024 10:00:00 +0000\n",
			want: []string{"container_killed pids=[] exit=137 signal=SIGKILL oomkilled=true"},
		},
		{
			name: "docker inspect of a clean exit is none",
			text: "            \"OOMKilled\": false,\n            \"Dead\": false,\n            \"Pid\": 0,\n            \"ExitCode\": 0,\n",
		},
		{
			name: "a cancelled job without a memory incident is none",
			text: "slurmstepd: error: *** JOB 7519 ON xantipa CANCELLED AT 2022-06-10T17:11:35 DUE TO TIME LIMIT ***\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			incs, err := Parse(strings.NewReader(tc.text), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			incs = Group(incs)
			for i := range incs {
				got = append(got, hostFields(&incs[i]))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
