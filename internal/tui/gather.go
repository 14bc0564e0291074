package tui

import (
	"time"

	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/shm"
)

// Extra is what the live view shows beside a Sample and gathers itself,
// after each Collect and off the UI goroutine: per-process CPU% and state
// (/proc/<pid>/stat), per-job /dev/shm (/proc/<pid>/maps), the host's
// /dev/shm (statfs) and a short history of each job's RSS. Render only
// reads it; nil (the --once table) shows none of it.
type Extra struct {
	Procs map[int]ProcExtra
	Jobs  map[string]JobExtra
	// HostShm is statfs of /dev/shm; nil when the host has none.
	HostShm *shm.Usage
}

// ProcExtra is one process's figures from /proc/<pid>/stat.
type ProcExtra struct {
	State string // R, S, D, Z, ...
	// CPUPercent is user+system time over the last interval, 100 = one
	// core; nil on a process's first sample.
	CPUPercent *float64
	// StartTicks identifies the process across PID reuse (the signal
	// dialog checks it before sending).
	StartTicks uint64
}

// JobExtra is one job's figures.
type JobExtra struct {
	// ShmBytes sums the distinct /dev/shm files the job's processes map;
	// nil until first read.
	ShmBytes *uint64
	// History is the job's RSS total at its last samples, oldest first.
	History []uint64
}

// userHZ is the unit of /proc/<pid>/stat's utime and stime: USER_HZ,
// 100 on every Linux architecture torchmem runs on (x86-64, arm64, ppc64le).
const userHZ = 100

// HistoryLen is how many samples of a job's RSS the sparkline keeps: half
// a minute at the default one-second interval, enough to tell a climb
// from a plateau.
const HistoryLen = 30

// shmPeriod is how often /proc/<pid>/maps is read for /dev/shm: a torch
// process's maps has ~1,700 lines (measured, torch 1.13), too many to
// read for every process on every tick; shared-memory batches come and go
// within a second, so a figure a few seconds old says as much.
const shmPeriod = 5 * time.Second

type cpuMark struct {
	ticks, start uint64
	at           time.Time
}

// gatherer keeps what Extra needs between samples.
type gatherer struct {
	fs      procfs.FS
	root    string // the host's / (for <root>/dev/shm)
	now     func() time.Time
	cpu     map[int]cpuMark
	hist    map[string][]uint64
	shm     map[string]uint64
	hostShm *shm.Usage
	shmAt   time.Time
}

func newGatherer(procRoot, root string, now func() time.Time) (*gatherer, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &gatherer{fs: fs, root: root, now: now, cpu: map[int]cpuMark{}, hist: map[string][]uint64{}}, nil
}

// startOf is a process's start time, read now (the signal question's
// check against a reused PID).
func (g *gatherer) startOf(pid int) (uint64, error) {
	st, err := g.fs.Stat(pid)
	return st.StartTicks, err
}

// gather reads what s lacks. A process that vanished since s is skipped.
func (g *gatherer) gather(s *sample.Sample) *Extra {
	now := g.now()
	e := &Extra{Procs: map[int]ProcExtra{}, Jobs: map[string]JobExtra{}}
	cpu := map[int]cpuMark{}
	for _, j := range s.Jobs {
		for _, p := range j.Processes {
			st, err := g.fs.Stat(p.PID)
			if err != nil {
				continue
			}
			m := cpuMark{ticks: st.CPUTicks, start: st.StartTicks, at: now}
			cpu[p.PID] = m
			e.Procs[p.PID] = ProcExtra{State: st.State, StartTicks: st.StartTicks,
				CPUPercent: cpuPercent(g.cpu[p.PID], m)}
		}
	}
	g.cpu = cpu
	if g.shm == nil || now.Sub(g.shmAt) >= shmPeriod {
		g.readShm(s)
		g.shmAt = now
	}
	hist := map[string][]uint64{}
	for _, j := range s.Jobs {
		h := append(g.hist[j.ID], j.Totals.RSSBytes)
		hist[j.ID] = h[max(0, len(h)-HistoryLen):]
		je := JobExtra{History: hist[j.ID]}
		if v, ok := g.shm[j.ID]; ok {
			je.ShmBytes = &v
		}
		e.Jobs[j.ID] = je
	}
	g.hist = hist
	e.HostShm = g.hostShm
	return e
}

// cpuPercent is the CPU time between two reads of one process over the
// wall time between them; nil when prev is of another process (none, or
// the PID was reused) or no time passed.
func cpuPercent(prev, cur cpuMark) *float64 {
	dt := cur.at.Sub(prev.at).Seconds()
	if prev.at.IsZero() || prev.start != cur.start || dt <= 0 || cur.ticks < prev.ticks {
		return nil
	}
	v := float64(cur.ticks-prev.ticks) / userHZ / dt * 100
	return &v
}

// readShm sums, per job, the /dev/shm files its processes map, each file
// once however many map it.
func (g *gatherer) readShm(s *sample.Sample) {
	g.shm = map[string]uint64{}
	for _, j := range s.Jobs {
		files := map[string]uint64{}
		for _, p := range j.Processes {
			maps, err := g.fs.ShmMaps(p.PID)
			if err != nil {
				continue
			}
			for _, m := range maps {
				files[m.Key] = max(files[m.Key], m.Bytes)
			}
		}
		var sum uint64
		for _, b := range files {
			sum += b
		}
		g.shm[j.ID] = sum
	}
	g.hostShm = nil
	if u, err := shm.Read(g.root); err == nil {
		g.hostShm = &u
	}
}
