package oomexplain

import (
	"regexp"
	"strings"
)

// torchrunTable follows torch.distributed.elastic's failure report:
//
//	train.py FAILED
//	Root Cause (first observed failure):
//	[0]:
//	  time      : 2024-03-01_10:00:00
//	  host      : node1
//	  rank      : 0 (local_rank: 0)
//	  exitcode  : -9 (pid: 3045)
//	  error_file: <N/A>
//	  traceback : Signal 9 (SIGKILL) received by PID 3045
type torchrunTable struct {
	active  bool
	start   int
	program string
	host    string
	rank    *int
	local   *int
}

var (
	reTRRank   = regexp.MustCompile(`^rank\s*:?\s*(\d+) \(local[_ ]rank: (\d+)\)`)
	reTRExit   = regexp.MustCompile(`^exitcode\s*:\s*(-?\d+) \(pid: (\d+)\)`)
	reTRSignal = regexp.MustCompile(`^(?:traceback|msg)\s*:\s*[Ss]ignal (\d+) \((SIG[A-Z]+)\) received by PID (\d+)`)
	// A table retyped or OCR'd runs its fields together and loses their
	// punctuation: "rank2 (local rank: 2)exitcode: -9 (pid: 36071)error
	// file: <N/A>" (corpus host/052). Inside an open table the exit code
	// is read wherever it is on the line.
	reTRExitIn = regexp.MustCompile(`exitcode\s*:\s*(-?\d+) \(pid: (\d+)\)`)
	reTREntry  = regexp.MustCompile(`^\[\d+\]:$`)
	reTRFailed = regexp.MustCompile(`failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\) of binary: (\S+)`)
	// torch.multiprocessing.spawn: "Exception: process 1 terminated with
	// signal SIGKILL" (1.x), "torch.multiprocessing.spawn.ProcessExitedException:
	// process 0 terminated with signal SIGKILL" (>= 1.8).
	reSpawnSignal = regexp.MustCompile(`process (\d+) terminated with signal (SIG[A-Z]+)`)
)

// tableEntry: a line of the failure table that opens it when its header
// ("ChildFailedError", "Failures:") was cut off the excerpt.
func tableEntry(t string) bool {
	return strings.HasPrefix(t, "exitcode") && reTRExit.MatchString(t) ||
		(strings.HasPrefix(t, "traceback") || strings.HasPrefix(t, "msg")) && reTRSignal.MatchString(t)
}

// tableRow handles one line of the failure table; false if it is not one.
func (h *hostParser) tableRow(l *line, t string) bool {
	tb := &h.table
	switch {
	case reTREntry.MatchString(t):
		// "[3]:" starts an entry: nothing of the last one carries over.
		tb.rank, tb.local, tb.host = nil, nil, ""
	case strings.HasSuffix(t, " FAILED") && !strings.Contains(t, ":"):
		tb.program = strings.TrimSuffix(t, " FAILED")
	case (strings.HasPrefix(t, "host ") || strings.HasPrefix(t, "host:")) && strings.Contains(t, ":"):
		_, v, _ := strings.Cut(t, ":")
		tb.host = strings.TrimSpace(v)
	case reTRRank.MatchString(t) || reTRExitIn.MatchString(t):
		if m := reTRRank.FindStringSubmatch(t); m != nil {
			tb.rank, tb.local = atoiPtr(m[1]), atoiPtr(m[2])
		}
		if m := reTRExitIn.FindStringSubmatch(t); m != nil {
			h.torchrunChild(l, t, atoiPtr(m[1]), atoiPtr(m[2]), tb.rank, tb.local, tb.host, tb.program)
		}
	case (strings.HasPrefix(t, "traceback") || strings.HasPrefix(t, "msg")) && strings.Contains(t, "received by PID"):
		h.signalRow(l, t)
	default:
		return strings.HasPrefix(t, "time ") || strings.HasPrefix(t, "time:") || strings.HasPrefix(t, "error_file") || strings.HasPrefix(t, "[")
	}
	return true
}

// signalRow adds "Signal 9 (SIGKILL) received by PID P" to P's entry,
// never to another's (an entry with exitcode -15 has no incident: its
// SIGTERM is not the SIGKILL before it; corpus host/041). An entry cut to
// this line (the table's top above the excerpt, host/008) is recorded
// from it.
func (h *hostParser) signalRow(l *line, t string) {
	m := reTRSignal.FindStringSubmatch(t)
	if m == nil {
		return
	}
	sig, pid := atoiPtr(m[1]), atoiPtr(m[3])
	if sig == nil || pid == nil {
		return
	}
	kind := KindTorchrunSIGKILL
	switch *sig {
	case 9:
	case 7:
		kind = KindSharedMemory
	default:
		return
	}
	r := h.findPID(kind, *pid, l.no)
	if r == nil {
		tb := &h.table
		r = h.add(l, kind, &HostFailure{Signal: m[2], SignalNumber: sig, LocalRank: tb.local, Program: tb.program, Message: t}, []int{*pid})
		if r.Rank == nil {
			r.Rank = tb.rank
		}
		if r.Host == "" {
			r.Host = tb.host
		}
		return
	}
	r.Failure.SignalNumber, r.Failure.Signal = sig, m[2]
}

// spawnKilled: torch.multiprocessing.spawn reports a child killed by a
// signal with its process index (the local rank it was given), not its pid.
func (h *hostParser) spawnKilled(l *line, t string) {
	m := reSpawnSignal.FindStringSubmatch(t)
	if m == nil {
		return
	}
	kind, num := KindTorchrunSIGKILL, 9
	switch m[2] {
	case "SIGKILL":
	case "SIGBUS":
		kind, num = KindSharedMemory, 7
	default:
		return
	}
	h.add(l, kind, &HostFailure{Signal: m[2], SignalNumber: intPtr(num), LocalRank: atoiPtr(m[1]), Message: t}, nil)
}

// torchrunFailed: "... failed (exitcode: -9) local_rank: 0 (pid: 3045) of binary: /usr/bin/python3".
func (h *hostParser) torchrunFailed(l *line, t string) {
	m := reTRFailed.FindStringSubmatch(t)
	if m == nil {
		return
	}
	h.torchrunChild(l, t, atoiPtr(m[1]), atoiPtr(m[3]), nil, atoiPtr(m[2]), "", m[4])
}

// torchrunChild records a child that died of SIGKILL (-9, usually the OOM
// killer) or SIGBUS (-7, usually shared memory); other exit codes are not
// memory incidents.
func (h *hostParser) torchrunChild(l *line, t string, code, pid, rank, local *int, host, program string) {
	if code == nil || pid == nil || (*code != -9 && *code != -7) {
		return
	}
	kind, sig := KindTorchrunSIGKILL, "SIGKILL"
	if *code == -7 {
		kind, sig = KindSharedMemory, "SIGBUS"
	}
	inc := h.findPID(kind, *pid, l.no)
	if inc == nil {
		f := &HostFailure{ExitCode: code, Signal: sig, SignalNumber: intPtr(-*code), LocalRank: local, Program: program, Message: t}
		inc = h.add(l, kind, f, []int{*pid})
	}
	if inc.Rank == nil && rank != nil {
		inc.Rank = rank
	}
	if inc.Host == "" && host != "" {
		inc.Host = host
	}
	if inc.Failure.LocalRank == nil {
		inc.Failure.LocalRank = local
	}
	if inc.Failure.Program == "" {
		inc.Failure.Program = program
	}
}

// findPID returns a recent incident of kind about pid: torchrun reports a
// child both in its ERROR line and in the failure table.
func (h *hostParser) findPID(kind Kind, pid, no int) *Incident {
	for i := len(h.recent) - 1; i >= 0; i-- {
		r := h.recent[i]
		if r.Kind == kind && no-r.Line < hostDedupLines && hasInt(r.PIDs, pid) {
			return r
		}
	}
	return nil
}
