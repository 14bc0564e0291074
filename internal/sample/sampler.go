package sample

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/identity"
	"github.com/torchmem/torchmem/internal/procfs"
)

// Defaults of the PSS tier.
const (
	DefaultPSSPeriod    = 10 * time.Second
	DefaultPSSRSSChange = 0.05
)

// Options configures a Sampler. Zero values mean the real host, every
// process, and the default PSS tier.
type Options struct {
	// ProcRoot and SysRoot: "/proc" and "/sys" unless set.
	ProcRoot string
	SysRoot  string
	// Mountinfo is where cgroup mounts are read; <ProcRoot>/self/mountinfo
	// unless set.
	Mountinfo string
	// GPU is the GPU backend (gpu.Open's result); nil means none. The
	// Sampler does not close it. GPUNotice is gpu.Open's notice, if any.
	GPU       gpu.Backend
	GPUNotice string
	// PIDs, when set, restricts sampling to the processes it returns, taken
	// as one job (the supervisor's own job) whatever they run.
	PIDs func() []int
	// CgroupPath, when set, is the job's cgroup (a path as in
	// /proc/<pid>/cgroup): its state is the job's, and without PIDs its
	// cgroup.procs lists the job's processes.
	CgroupPath string
	// NoCgroup skips reading the jobs' memory cgroups: for a caller that
	// reads the job's cgroup itself (the run supervisor, through the group
	// it made) and would otherwise have it read twice every tick.
	NoCgroup bool
	// PSSPeriod is the longest a PSS figure is reused (DefaultPSSPeriod
	// unless set); negative turns the PSS tier off.
	PSSPeriod time.Duration
	// PSSRSSChange re-reads a process's PSS early when its RSS moved by more
	// than this fraction (DefaultPSSRSSChange unless set).
	PSSRSSChange float64
	// PSSTogether schedules the PSS tier for all processes at once rather
	// than per process: every PSSPeriod one Collect re-reads every process
	// (the first such Collect PSSFirst after the first Collect), a process
	// seen for the first time is read at once, and none is read early on
	// an RSS move (PSSRSSChange is unused). A PSS total then sums figures
	// of one instant (Totals.PSSMaxAgeSeconds 0), and a process growing
	// into its limit is not walked on every jump: the run supervisor's
	// schedule, where Collect's clock is the supervisor's tick.
	PSSTogether bool
	// PSSFirst is, with PSSTogether, the wait from the first Collect to the
	// first whole read (one PSSPeriod unless set).
	PSSFirst time.Duration
	// PSSWorkers is how many smaps_rollup reads run at once (default: the
	// number of CPUs, at most 4; 1 reads one after the other).
	PSSWorkers int
	// PSSFromSmaps sums /proc/<pid>/smaps instead of reading smaps_rollup,
	// as smem and kernels before 4.14 do: slower, and each mapping rounded
	// down to a kB. For comparisons with smem.
	PSSFromSmaps bool
	// Now is the clock (time.Now unless set).
	Now func() time.Time
	// Identity resolves each job's workload identity (identity.go); nil
	// means one without the kubelet's pod-resources API: pods are then
	// named by UID from their cgroup path.
	Identity *identity.Resolver
}

// Sampler collects Samples, keeping what is costly to read between calls.
type Sampler struct {
	opts     Options
	fs       procfs.FS
	hier     cgroup.Hierarchy
	hierErr  error
	procs    map[int]*procState
	notices  []string
	noted    map[string]bool
	psiOff   bool
	forcePSS bool
	// nextPSS is when the next whole read is due (PSSTogether).
	nextPSS time.Time
	// cgErrNoted: a cgroup read failure was already reported.
	cgErrNoted bool
}

// New returns a Sampler over opts. It fails only when the proc root cannot
// be opened; every other missing source becomes a notice.
func New(opts Options) (*Sampler, error) {
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	if opts.SysRoot == "" {
		opts.SysRoot = "/sys"
	}
	if opts.Mountinfo == "" {
		opts.Mountinfo = filepath.Join(opts.ProcRoot, "self", "mountinfo")
	}
	if opts.PSSPeriod == 0 {
		opts.PSSPeriod = DefaultPSSPeriod
	}
	if opts.PSSRSSChange == 0 {
		opts.PSSRSSChange = DefaultPSSRSSChange
	}
	if opts.PSSFirst == 0 {
		opts.PSSFirst = opts.PSSPeriod
	}
	if opts.PSSWorkers <= 0 {
		opts.PSSWorkers = min(4, runtime.NumCPU())
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.GPU == nil {
		opts.GPU = gpu.NewNoop()
	}
	if opts.Identity == nil {
		opts.Identity = identity.NewResolver(identity.ResolverOptions{Now: opts.Now})
	}
	fs, err := procfs.NewFS(opts.ProcRoot)
	if err != nil {
		return nil, err
	}
	s := &Sampler{opts: opts, fs: fs, procs: map[int]*procState{}, noted: map[string]bool{}}
	s.hier, s.hierErr = cgroup.Detect(opts.Mountinfo)
	s.hier.Rebase(opts.SysRoot)
	if s.hierErr != nil {
		s.notice(fmt.Sprintf("cgroups: %v", s.hierErr))
	} else if s.hier.Mode == cgroup.ModeNone {
		s.notice("cgroups: no cgroup file system mounted; job limits unknown")
	}
	if opts.GPUNotice != "" {
		s.notice(opts.GPUNotice)
	}
	return s, nil
}

// notice records a standing one-line notice once.
func (s *Sampler) notice(n string) {
	if !s.noted[n] {
		s.noted[n] = true
		s.notices = append(s.notices, n)
	}
}

// Notices returns the standing notices so far.
func (s *Sampler) Notices() []string { return append([]string(nil), s.notices...) }

// RefreshPSS makes the next Collect re-read every process's PSS.
func (s *Sampler) RefreshPSS() { s.forcePSS = true }

// Collect takes one Sample. It fails only when the proc root itself cannot
// be read or ctx is done; a vanished process is skipped, a failing source
// becomes a notice or an error field.
func (s *Sampler) Collect(ctx context.Context) (*Sample, error) {
	start := time.Now() // cost accounting uses the real clock, not opts.Now
	now := s.opts.Now()
	s.scheduleTogether(now) // first: a whole read due stays due if this Collect fails
	out := &Sample{Schema: SchemaVersion, Time: now, Jobs: []Job{}}
	out.Host.CgroupMode = s.hier.Mode.String()
	if err := s.readHost(&out.Host); err != nil {
		return nil, err
	}
	gpuBy := s.readGPU(&out.GPU)
	trees, err := s.scan(ctx, gpuBy)
	if err != nil {
		return nil, err
	}
	pss := s.refreshPSS(ctx, trees, now)
	out.Jobs = s.buildJobs(trees, gpuBy, now, out.GPU.Info.Backend)
	s.identify(ctx, out)
	s.forcePSS = false
	out.Notices = s.Notices()
	out.Tier = Tier{
		FastSeconds: (time.Since(start) - pss.cost).Seconds(),
		PSSRead:     pss.n, PSSSeconds: pss.cost.Seconds(),
		PSSPeriodSeconds: s.opts.PSSPeriod.Seconds(),
	}
	return out, ctx.Err()
}

func (s *Sampler) readHost(h *Host) error {
	m, err := s.fs.Meminfo()
	if err != nil {
		return err
	}
	h.Meminfo = m
	if s.psiOff {
		return nil
	}
	p, err := s.fs.MemoryPressure()
	switch {
	case err == nil:
		h.PSI = &p
	case errors.Is(err, procfs.ErrNotPresent):
		s.psiOff = true
		s.notice("PSI: this kernel has no memory pressure information (needs 4.20+, and psi=1 on RHEL 8)")
	default:
		s.notice(fmt.Sprintf("PSI: %v", err))
	}
	return nil
}
