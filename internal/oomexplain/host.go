package oomexplain

// Host-side failures around training (torch/utils/data/dataloader.py,
// torch/csrc/DataLoader.cpp, libshm, torch/distributed/elastic,
// slurmstepd, systemd-oomd):
//
//	RuntimeError: DataLoader worker (pid 12345) is killed by signal: Killed.
//	RuntimeError: DataLoader worker (pid 12345) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. ...
//	RuntimeError: DataLoader worker (pid(s) 12345, 12346) exited unexpectedly
//	ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
//	RuntimeError: unable to open shared memory object </torch_1_2_3> in read-write mode: Too many open files (24)
//	RuntimeError: unable to write to file </torch_18692_1620393573>: No space left on device (28)
//	RuntimeError: received 0 items of ancdata
//	... failed (exitcode: -9) local_rank: 0 (pid: 3045) of binary: /usr/bin/python3
//	  exitcode  : -9 (pid: 3045)  /  traceback : Signal 9 (SIGKILL) received by PID 3045
//	slurmstepd: error: Detected 1 oom-kill event(s) in StepId=12345.0. Some of your processes may have been killed ...
//	systemd-oomd[712]: Killed /user.slice/.../app.scope due to memory pressure for /user.slice/... being 61.49% > 50.00% for > 20s with reclaim activity

import "strings"

const (
	hostDedupLines = 200 // a repeat within this many lines is the same failure
	torchrunLines  = 80  // the failure table follows ChildFailedError closely
)

type hostParser struct {
	p      *Parser
	recent []*Incident // bounded: the last few host incidents, for merging
	table  torchrunTable
	ctr    containerState
	oomd   oomdPending
	winAt  int // line of the last Windows path
}

func newHostParser(p *Parser) *hostParser { return &hostParser{p: p} }

// open: a failure table is being read, or a container status whose
// next lines may add its exit code (kubectl describe puts it below).
func (h *hostParser) open() bool {
	return h.table.active || h.ctr.inc != nil && h.p.lineNo-h.ctr.no <= containerLines
}

func (h *hostParser) flush() {
	h.table, h.ctr, h.oomd, h.winAt = torchrunTable{}, containerState{}, oomdPending{}, 0
}

// hostWords: every literal (and prefix) that feed, windowsPath and
// tableEntry look for holds one of these.
var hostWords = []string{
	"DataLoader worker", "bus error", "This might be caused", "shared memory", "unable to", "ancdata",
	"Too many open files", "Killed", "killed", "xitCode", "xit Code", "ChildFailedError", "exitcode", "traceback",
	"msg", "terminated with signal", "oom-kill event", "oom_kill event", "systemd-oomd", "Out Of Memory",
	"Exceeded ", "slurmstepd", "job step ", "*** JOB ", "*** STEP ", "Marked /", `:\`, `\site-packages\`,
}

func (h *hostParser) feed(l *line) {
	if !h.table.active && l.words&wordsHost == 0 && l.Ident != "systemd-oomd" {
		return // no failure table open, and none of the cases below can match
	}
	t := strings.TrimSpace(l.text)
	if windowsPath(t) {
		h.windows(l.no)
	}
	if h.table.active {
		if l.no-h.table.start > torchrunLines {
			h.table = torchrunTable{}
		} else if h.tableRow(l, t) {
			return
		}
	}
	switch {
	case strings.Contains(t, "DataLoader worker"):
		h.dataLoader(l, t)
	case strings.Contains(t, "bus error encountered in worker"):
		h.add(l, KindSharedMemory, &HostFailure{Signal: "Bus error", SignalNumber: intPtr(7), Message: t}, nil)
	case strings.HasPrefix(t, "This might be caused by insufficient shared memory"):
		h.shmHint(l, t)
	case strings.Contains(t, "shared memory object") || strings.Contains(t, "unable to write to file </") ||
		strings.Contains(t, "unable to mmap") || strings.Contains(t, "unable to allocate shared memory"):
		h.sharedMemory(l, t)
	case strings.Contains(t, "received 0 items of ancdata") || strings.Contains(t, "Too many open files"):
		h.add(l, KindTooManyOpenFiles, &HostFailure{Errno: "Too many open files", Message: t}, nil)
	case containerLine(t):
		h.container(l, t)
	case strings.Contains(t, "ChildFailedError"):
		h.table = torchrunTable{active: true, start: l.no}
	case tableEntry(t):
		h.table = torchrunTable{active: true, start: l.no}
		h.tableRow(l, t)
	case strings.Contains(t, "terminated with signal SIG"):
		h.spawnKilled(l, t)
	case strings.Contains(t, "(exitcode: ") && strings.Contains(t, "local_rank:"):
		h.torchrunFailed(l, t)
	case strings.Contains(t, "oom-kill event") || strings.Contains(t, "oom_kill event") ||
		strings.Contains(t, ": Out Of Memory") || strings.Contains(t, "Exceeded job memory limit") ||
		strings.Contains(t, "Exceeded step memory limit") ||
		strings.Contains(t, "slurmstepd") && strings.Contains(t, "exceeded memory limit"):
		h.slurm(l, t)
	case strings.Contains(t, "job step ") || strings.Contains(t, "*** JOB ") || strings.Contains(t, "*** STEP "):
		h.slurmID(l, t)
	case l.Ident == "systemd-oomd" || strings.Contains(t, "systemd-oomd"):
		h.systemdOOMD(l, t)
	case (strings.HasPrefix(t, "Killed /") || strings.HasPrefix(t, "Marked /")) && strings.Contains(t, " due to "):
		h.systemdOOMD(l, t)
	case strings.Contains(t, "Killed") || strings.Contains(t, "zsh: killed") || strings.HasPrefix(t, "[") && strings.Contains(t, " killed "):
		h.shell(l, t)
	}
}

// add emits a host incident unless it repeats a recent one (same kind and
// pids, or same message), which then counts it.
func (h *hostParser) add(l *line, kind Kind, f *HostFailure, pids []int) *Incident {
	for i := len(h.recent) - 1; i >= 0; i-- {
		r := h.recent[i]
		if l.no-r.Line > hostDedupLines {
			break
		}
		if sameHostFailure(r, kind, f, pids) {
			r.Count++
			return r
		}
	}
	inc := h.p.newIncident(kind, l)
	inc.Failure, inc.PIDs = f, pids
	if h.winAt > 0 && l.no-h.winAt <= windowsContext {
		f.Platform = PlatformWindows
	}
	h.p.addRaw(inc, l.Text)
	h.recent = append(h.recent, inc)
	if len(h.recent) > 16 {
		h.recent = h.recent[1:]
	}
	h.p.emit(inc)
	return inc
}

func sameHostFailure(r *Incident, kind Kind, f *HostFailure, pids []int) bool {
	if kind == KindSlurmOOM && r.Kind == KindSlurmOOM && (f.JobID == "" || r.Failure.JobID == "" || f.JobID == r.Failure.JobID) &&
		(f.StepID == "" || r.Failure.StepID == "" || f.StepID == r.Failure.StepID) {
		// srun's "task 0: Out Of Memory" and the limit lines without a
		// step add to the step's detection. slurmstepd's detections in
		// two steps of a job (.0, then .batch: corpus host/055) are two
		// incidents: each step's cgroup counted its own OOM kills.
		adoptSlurmIDs(r.Failure, f.JobID, f.StepID)
		return true
	}
	if kind == KindSharedMemory && r.Kind == KindSharedMemory && f.Signal == "Bus error" &&
		r.Failure != nil && r.Failure.Signal == "Bus error" && (len(pids) == 0) != (len(r.PIDs) == 0) {
		// The worker's own "ERROR: Unexpected bus error encountered in
		// worker" and the main process's "DataLoader worker (pid N) is
		// killed by signal: Bus error" are one failure told twice.
		if len(r.PIDs) == 0 {
			r.PIDs = pids
		}
		return true
	}
	if len(pids) > 0 && len(r.PIDs) > 0 {
		// "exited unexpectedly" after "killed by signal" for the same pids is
		// the chained traceback of one failure.
		related := r.Kind == kind || kind == KindDataLoaderExited &&
			(r.Kind == KindDataLoaderKilled || r.Kind == KindSharedMemory)
		return related && subset(pids, r.PIDs)
	}
	return r.Kind == kind && r.Failure != nil && r.Failure.Message == f.Message
}

// shmHint: the second sentence of the worker's bus-error message. Right
// after the first (wrapped onto its own line) it is the same message;
// alone (an excerpt that kept only it) it is the incident.
func (h *hostParser) shmHint(l *line, t string) {
	if n := len(h.recent); n > 0 {
		if r := h.recent[n-1]; r.Kind == KindSharedMemory && l.no-r.Line <= 2 {
			h.p.addRaw(r, l.Text)
			return
		}
	}
	h.add(l, KindSharedMemory, &HostFailure{Signal: "Bus error", SignalNumber: intPtr(7), Message: t}, nil)
}

func subset(a, b []int) bool {
	for _, x := range a {
		if !hasInt(b, x) {
			return false
		}
	}
	return true
}

func intPtr(n int) *int { return &n }
