package oomexplain

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	reDLKilled  = regexp.MustCompile(`DataLoader worker \(pid (\d+)\) is killed by signal: ([A-Za-z ]+?)(?:\.|\s*$)`)
	reDLExited  = regexp.MustCompile(`DataLoader worker \(pid\(s\) ([0-9, ]+)\) exited unexpectedly`)
	reDLExitOne = regexp.MustCompile(`DataLoader worker \(pid (\d+)\) exited unexpectedly(?: with exit code (-?\d+))?`)
	reShmObject = regexp.MustCompile(`<(/?[^>]*)>`)
	reErrno     = regexp.MustCompile(`: ([A-Z][A-Za-z ]+) \((\d+)\)`)
	reSlurm     = regexp.MustCompile(`Detected (\d+) oom[-_]kill events?(?:\(s\))? in (?:StepId=(\S+)|step (\S+))`)
	reSrunOOM   = regexp.MustCompile(`(\S+): tasks? ([0-9-]+): Out Of Memory`)
	// slurmstepd's accounting poll (jobacct_gather, no cgroup OOM):
	// "Job 1171978 exceeded memory limit (18202456 > 16384000), being killed" (KiB).
	reSlurmPoll = regexp.MustCompile(`(Job|Step) (\S+) exceeded memory limit \((\d+) > (\d+)\)`)
	// Lines that name the job or step but are no incident of their own:
	// "srun: Terminating job step 2750598.0", "*** JOB 7518 ON xantipa
	// CANCELLED AT ...", "*** STEP 2750598.0 ON node CANCELLED ...".
	reSlurmID = regexp.MustCompile(`(?:Terminating job step|\*\*\* (?:JOB|STEP)) ([0-9]+(?:\.[0-9A-Za-z_+]+)?)`)
	// "Killed /x.scope due to ..." (systemd < 256), "Marked /x.service
	// for killing due to ..." (newer: corpus host/058); the pids come
	// before, at debug level: "oomd attempting to kill 407 with KILL".
	reOOMDKill = regexp.MustCompile(`(?:Killed|Marked) (/\S+) (?:for killing )?due to (.+)$`)
	reOOMDPID  = regexp.MustCompile(`oomd attempting to kill (\d+) with `)
	reOOMDUnit = regexp.MustCompile(`(\S+): systemd-oomd killed (\d+) process\(es\) in this unit`)
)

// signalNumbers maps strsignal() text to numbers (Linux x86/arm).
var signalNumbers = map[string]int{"Killed": 9, "Bus error": 7, "Segmentation fault": 11, "Aborted": 6, "Terminated": 15}

func (h *hostParser) dataLoader(l *line, t string) {
	if m := reDLKilled.FindStringSubmatch(t); m != nil {
		pid, _ := strconv.Atoi(m[1])
		f := &HostFailure{Signal: m[2], Message: t}
		if n, ok := signalNumbers[m[2]]; ok {
			f.SignalNumber = intPtr(n)
		}
		switch m[2] {
		case "Killed":
			h.add(l, KindDataLoaderKilled, f, []int{pid})
		case "Bus error":
			h.add(l, KindSharedMemory, f, []int{pid})
		}
		return
	}
	if m := reDLExited.FindStringSubmatch(t); m != nil {
		h.add(l, KindDataLoaderExited, &HostFailure{Message: t}, parsePIDList(m[1]))
		return
	}
	if m := reDLExitOne.FindStringSubmatch(t); m != nil {
		pid, _ := strconv.Atoi(m[1])
		f := &HostFailure{Message: t}
		if m[2] != "" {
			f.ExitCode = atoiPtr(m[2])
		}
		if f.ExitCode != nil && *f.ExitCode > 0 && h.recentDataLoader(l.no) != nil {
			return // a worker dying of an error after another's kill: the same failure
		}
		h.add(l, KindDataLoaderExited, f, []int{pid})
	}
}

func parsePIDList(s string) []int {
	var pids []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && len(pids) < 256 {
			pids = append(pids, n)
		}
	}
	return pids
}

// sharedMemory: libshm / THManagedMapAllocator failures. errno 24 (EMFILE)
// is the file-descriptor limit, not /dev/shm's size.
func (h *hostParser) sharedMemory(l *line, t string) {
	f := &HostFailure{Message: t}
	if m := reShmObject.FindStringSubmatch(t); m != nil {
		f.ShmObject = m[1]
	}
	kind := KindSharedMemory
	if m := reErrno.FindStringSubmatch(t); m != nil {
		f.Errno = m[1]
		if m[2] == "24" {
			kind = KindTooManyOpenFiles
		}
	} else if strings.Contains(t, "Too many open files") {
		f.Errno, kind = "Too many open files", KindTooManyOpenFiles
	}
	h.add(l, kind, f, nil)
}

func (h *hostParser) slurm(l *line, t string) {
	f := &HostFailure{Message: t}
	if m := reSlurm.FindStringSubmatch(t); m != nil {
		f.OOMEvents = atoiPtr(m[1])
		f.StepID = strings.TrimSuffix(strings.TrimSuffix(m[2]+m[3], "."), " cgroup")
		f.JobID, _, _ = strings.Cut(f.StepID, ".")
	} else if m := reSlurmPoll.FindStringSubmatch(t); m != nil {
		f.JobID, _, _ = strings.Cut(m[2], ".")
		if m[1] == "Step" {
			f.StepID = m[2]
		}
		f.Reason = "memory limit exceeded: " + m[3] + " > " + m[4] + " KiB"
	} else if m := reSrunOOM.FindStringSubmatch(t); m != nil {
		f.Reason = "task " + m[2] + " on " + m[1]
	} else {
		f.Reason = "memory limit exceeded"
	}
	h.add(l, KindSlurmOOM, f, nil)
}

// slurmID gives a recent Slurm incident the job or step that a later
// line names (corpus host/042: "srun: Terminating job step 2750598.0"
// after "Exceeded job memory limit at some point.").
func (h *hostParser) slurmID(l *line, t string) {
	m := reSlurmID.FindStringSubmatch(t)
	if m == nil {
		return
	}
	job, _, isStep := strings.Cut(m[1], ".")
	step := ""
	if isStep {
		step = m[1]
	}
	for i := len(h.recent) - 1; i >= 0; i-- {
		r := h.recent[i]
		if l.no-r.Line > hostDedupLines {
			return
		}
		if r.Kind == KindSlurmOOM {
			adoptSlurmIDs(r.Failure, job, step)
			return
		}
	}
}

// adoptSlurmIDs fills the job and step an incident lacks, from a line
// about the same job (or one whose job the incident does not know).
func adoptSlurmIDs(f *HostFailure, job, step string) {
	if job == "" || f.JobID != "" && f.JobID != job {
		return
	}
	f.JobID = job
	if f.StepID == "" {
		f.StepID = step
	}
}

func (h *hostParser) systemdOOMD(l *line, t string) {
	if m := reOOMDPID.FindStringSubmatch(t); m != nil {
		h.oomdPID(l.no, m[1])
		return
	}
	if m := reOOMDKill.FindStringSubmatch(t); m != nil {
		var pids []int
		if l.no-h.oomd.no <= oomdLines {
			pids = h.oomd.pids
		}
		h.oomd = oomdPending{}
		h.add(l, KindSystemdOOMD, &HostFailure{Cgroup: m[1], Reason: m[2], Message: t}, pids)
		return
	}
	if m := reOOMDUnit.FindStringSubmatch(t); m != nil {
		n := atoiPtr(m[2])
		for i := len(h.recent) - 1; i >= 0; i-- {
			r := h.recent[i]
			if r.Kind == KindSystemdOOMD && l.no-r.Line < hostDedupLines && strings.HasSuffix(r.Failure.Cgroup, "/"+m[1]) {
				r.Failure.OOMEvents = n
				return
			}
		}
		h.add(l, KindSystemdOOMD, &HostFailure{Cgroup: m[1], OOMEvents: n, Message: t}, nil)
	}
}

// recentDataLoader returns a DataLoader kill reported shortly before.
func (h *hostParser) recentDataLoader(no int) *Incident {
	for i := len(h.recent) - 1; i >= 0; i-- {
		r := h.recent[i]
		if no-r.Line > hostDedupLines {
			return nil
		}
		if r.Kind == KindDataLoaderKilled || r.Kind == KindSharedMemory {
			return r
		}
	}
	return nil
}

// oomdLines: systemd-oomd logs the pids it kills just before the line
// naming their cgroup.
const oomdLines = 20

// oomdPending holds the pids systemd-oomd said it was killing, until the
// line that names their cgroup.
type oomdPending struct {
	pids []int
	no   int // line of the last one
}

func (h *hostParser) oomdPID(no int, pid string) {
	n, err := strconv.Atoi(pid)
	if err != nil {
		return
	}
	if no-h.oomd.no > oomdLines {
		h.oomd = oomdPending{}
	}
	if len(h.oomd.pids) < 256 && !hasInt(h.oomd.pids, n) {
		h.oomd.pids = append(h.oomd.pids, n)
	}
	h.oomd.no = no
}
