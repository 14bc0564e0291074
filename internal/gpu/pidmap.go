package gpu

// NVML reports PIDs as the host's PID namespace sees them. Inside a
// container those are not our PIDs. The kernel's map is the NSpid line of
// /proc/<pid>/status (Linux 4.1+): the PID in the namespace of that /proc
// mount first, then in each nested namespace, ours last:
//
//	NSpid:	48211	17
//
// so a /proc from an ancestor namespace (the host's, bind-mounted and
// passed as procRoot) maps a host PID to ours with one small read per GPU
// process. A container's own /proc cannot show host PIDs at all: those
// processes are labelled Unmapped rather than dropped.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// initPIDNamespace is the inode of the initial PID namespace
// (PROC_PID_INIT_INO), as readlink /proc/self/ns/pid shows it.
const initPIDNamespace = "pid:[4026531836]"

type pidMode int

const (
	pidIdentity pidMode = iota // we are in the host's PID namespace
	pidNSpid                   // procRoot is an ancestor's /proc: map through NSpid
	pidBlind                   // our own namespace's /proc: host PIDs invisible
)

// pidMapper maps host PIDs to PIDs in our namespace. The mode is worked
// out once; each Map reads only the status files of the GPU processes.
type pidMapper struct {
	procRoot string
	once     sync.Once
	mode     pidMode
	depth    int    // NSpid entries of our own process
	selfNS   string // readlink procRoot/self/ns/pid
}

func newPIDMapper(procRoot string) *pidMapper { return &pidMapper{procRoot: procRoot} }

func (m *pidMapper) detect() {
	m.depth = 1
	if b, err := os.ReadFile(filepath.Join(m.procRoot, "self", "status")); err == nil {
		if ns := parseNSpid(string(b)); len(ns) > 0 {
			m.depth = len(ns)
		}
	}
	m.selfNS, _ = os.Readlink(filepath.Join(m.procRoot, "self", "ns", "pid"))
	switch {
	case m.depth >= 2:
		m.mode = pidNSpid
	case m.selfNS == "" || m.selfNS == initPIDNamespace:
		// An unreadable link (old kernel, fixture tree) most often means
		// a plain host: trust the PIDs as they are.
		m.mode = pidIdentity
	default:
		m.mode = pidBlind
	}
}

// Map fills PID and Unmapped of each process from its HostPID.
func (m *pidMapper) Map(procs []Process) {
	if m == nil {
		for i := range procs {
			procs[i].PID = procs[i].HostPID
		}
		return
	}
	m.once.Do(m.detect)
	for i := range procs {
		p := &procs[i]
		switch m.mode {
		case pidIdentity:
			p.PID = p.HostPID
		case pidBlind:
			p.PID, p.Unmapped = 0, true
		case pidNSpid:
			p.PID = m.lookup(p.HostPID)
			p.Unmapped = p.PID == 0
		}
	}
}

// lookup returns the PID in our namespace of the process the procRoot
// mount calls host, or 0 when it is gone or lives in another container.
func (m *pidMapper) lookup(host int) int {
	dir := filepath.Join(m.procRoot, strconv.Itoa(host))
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return 0
	}
	ns := parseNSpid(string(b))
	if len(ns) != m.depth {
		return 0
	}
	if link, err := os.Readlink(filepath.Join(dir, "ns", "pid")); err == nil && m.selfNS != "" && link != m.selfNS {
		return 0 // same depth, but a sibling container
	}
	return ns[m.depth-1]
}

// parseNSpid returns the PIDs of the NSpid line of a status file, outermost
// first; nil when the line is absent (kernels before 4.1) or malformed.
func parseNSpid(status string) []int {
	for _, line := range strings.Split(status, "\n") {
		rest, ok := strings.CutPrefix(line, "NSpid:")
		if !ok {
			continue
		}
		var pids []int
		for _, f := range strings.Fields(rest) {
			n, err := strconv.Atoi(f)
			if err != nil || n <= 0 {
				return nil
			}
			pids = append(pids, n)
		}
		return pids
	}
	return nil
}
