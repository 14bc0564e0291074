package procfs

// /proc/<pid>/stat, read through prometheus/procfs:
//
//	517 (python3) R 516 516 411 0 -1 4194304 ... 19 0 0 ... 8804 ...

import "fmt"

// Stat is the part of /proc/<pid>/stat torchmem uses.
type Stat struct {
	PID   int    `json:"pid"`
	Comm  string `json:"comm"`
	State string `json:"state"`
	PPid  int    `json:"ppid"`
	// StartTicks is the start time in clock ticks after boot: with PID it
	// identifies a process across PID reuse.
	StartTicks uint64 `json:"start_ticks"`
	// CPUTicks is user+system time in clock ticks.
	CPUTicks uint64 `json:"cpu_ticks"`
}

// Stat reads <root>/<pid>/stat.
func (f FS) Stat(pid int) (Stat, error) {
	p, err := f.prom.Proc(pid)
	if err != nil {
		return Stat{}, fmt.Errorf("open %s: %w", f.pidPath(pid, ""), err)
	}
	st, err := p.Stat()
	if err != nil {
		return Stat{}, fmt.Errorf("read %s: %w", f.pidPath(pid, "stat"), err)
	}
	return Stat{
		PID: st.PID, Comm: st.Comm, State: st.State, PPid: st.PPID,
		StartTicks: st.Starttime, CPUTicks: uint64(st.UTime + st.STime),
	}, nil
}

// Exited reports whether the process has ended and only its entry is
// left: state Z (a zombie its parent has not reaped yet) or X/x (dead, being
// removed). Such a PID still has a /proc directory but runs no code.
func (s Stat) Exited() bool {
	switch s.State {
	case "Z", "X", "x":
		return true
	}
	return false
}

// Cmdline reads <root>/<pid>/cmdline as its NUL-separated arguments; kernel
// threads and zombies have none.
func (f FS) Cmdline(pid int) ([]string, error) {
	p, err := f.prom.Proc(pid)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", f.pidPath(pid, ""), err)
	}
	args, err := p.CmdLine()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.pidPath(pid, "cmdline"), err)
	}
	return args, nil
}
