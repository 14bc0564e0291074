package supervisor

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/jobcgroup"
	"github.com/torchmem/torchmem/internal/oomexplain"
	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/units"
)

// sup is the state of one run, owned by the loop goroutine.
type sup struct {
	cfg    Config
	cg     *jobcgroup.Group
	job    *job
	srv    *hook.Server
	hk     *hookState
	sm     *sampler
	began  time.Time
	peaks  store.Peaks
	pst    policy.State
	events []store.Event // the latest, for the live view (liveEvents; the store keeps all)
	last   reading
	// everPIDs: every PID seen in the job (kernel lines name PIDs that are gone).
	everPIDs map[int]bool
	status   statusLine
	// gpuTotals: memory size by GPU index, read once (gpuTotal).
	gpuTotals map[int]int64

	growth growthTrack
	budget runBudget // what the job made us store, and what was dropped

	interrupts int
	terms      int       // SIGTERMs to torchmem (onTerm)
	wit        *witness  // interactive runs: who else got a SIGINT
	killAt     time.Time // SIGKILL the job's cgroup at this time (zero: not scheduled)
	// policyStop is the first policy rule that stopped the job (the stop
	// action, or a terminating signal action), for the post-mortem.
	policyStop *oomexplain.PolicyStop
	crossed    map[int64]time.Time // usage thresholds' last recorded crossing
	reaper     *exec.Cmd           // cleans up if torchmem dies (reaper.go); nil: none

	// in: PSI, time to OOM, exec/notify in flight (policyinputs.go).
	in policyInputs
}

// Result is how the run ended.
type Result struct {
	// ExitCode is the shell's status: the job's code, or 128+signal.
	ExitCode int
	Summary  Summary
}

// Run supervises cfg.Argv until the job's main process exits, then kills
// whatever is left of the job and returns the post-mortem. Errors are only
// for failing to start the job at all.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.defaults()
	s := &sup{cfg: cfg, hk: newHookState(), peaks: store.Peaks{}, began: cfg.Now(), everPIDs: map[int]bool{}}
	s.status = statusLine{w: cfg.Notices, on: cfg.StatusLine, now: cfg.Now}
	p, err := s.plan()
	if err != nil {
		return nil, err
	}
	if cfg.HookDir != "" {
		for _, line := range SweepStale(cfg.ProcRoot, filepath.Dir(cfg.HookDir)) {
			s.notice(line)
		}
	}
	s.setupCgroup()
	s.writeOwner()
	s.startReaper()
	if s.sm, err = newSampler(cfg.ProcRoot, cfg.SysRoot, cfg.GPU, s.cg, 0); err != nil {
		s.cleanup()
		return nil, err
	}
	env := s.setupHook()
	// Signals are caught before the job exists so none is lost in between.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	// A closed stderr (torchmem ... 2>&1 | head) must not kill the
	// supervisor: catching SIGPIPE (not ignoring it, which exec would pass
	// on to the job) turns it into a write error.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	if cfg.Interactive {
		if s.wit = s.startWitness(); s.wit != nil {
			defer s.wit.stop()
		}
	}
	s.job, err = s.start(env, p)
	if err != nil {
		s.cleanup()
		return nil, err
	}
	s.sm.rootPID = s.job.pid
	s.loop(ctx, sigs)
	res := s.finish(ctx)
	s.recordBudget()
	return res, nil
}

// snapshotDir is where the job's memory snapshots are written.
func (s *sup) snapshotDir() string {
	if s.cfg.SnapshotDir != "" {
		return s.cfg.SnapshotDir
	}
	return filepath.Join(s.cfg.HookDir, "snapshots")
}

func (s *sup) plan() (plan, error) {
	p := plan{Argv: s.cfg.Argv, NProc: s.cfg.NProc, NoFile: s.cfg.NoFile, Numactl: s.cfg.Numactl, Lang: s.lang().String()}
	var devs = devicesOf(s.cfg.GPU)
	nc, err := resolveNUMA(s.cfg.NUMA, s.cfg.SysRoot, devs, envValue(s.cfg.Env, "CUDA_VISIBLE_DEVICES"))
	if err != nil {
		return p, err
	}
	if nc.Notice != "" {
		s.notice(nc.say(tr(s.lang())))
	}
	p.NUMANode, p.CPUs = nc.Node, nc.CPUs
	return p, nil
}

func (s *sup) setupHook() []string {
	env := s.cfg.Env
	if !s.cfg.Hook || s.cfg.HookDir == "" {
		return env
	}
	add, err := hook.Install(s.cfg.HookDir, hook.InstallOptions{Interval: s.cfg.HookInterval,
		RecordHistory: s.cfg.RecordHistory, SnapshotDir: s.snapshotDir(), DetectCycles: s.cfg.DetectCycles, NoStepPeaks: s.cfg.NoStepPeaks})
	if err == nil {
		s.srv, err = hook.Listen(s.cfg.HookDir, hook.Options{Accept: s.acceptPeer, Now: s.cfg.Now})
	}
	if err != nil {
		s.notice(tr(s.lang())("notice.hook_off", err.Error()))
		return env
	}
	return hook.MergeEnv(env, add)
}

// acceptPeer admits only processes of this job: in its cgroup, or (monitor
// only) of our uid, which the server checks itself when Accept is nil.
func (s *sup) acceptPeer(p hook.Peer) bool {
	if s.cg == nil {
		return p.UID == os.Geteuid()
	}
	pids, err := s.cg.Procs()
	if err != nil {
		return false
	}
	return slices.Contains(pids, p.PID)
}

func (s *sup) loop(ctx context.Context, sigs <-chan os.Signal) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cgEvents <-chan jobcgroup.Event
	if s.cg != nil {
		ch, err := s.cg.Watch(wctx, s.thresholds())
		if err != nil {
			s.notice(tr(s.lang())("notice.cgroup_events_off", err.Error()))
		}
		cgEvents = ch
	}
	var msgs <-chan hook.Message
	if s.srv != nil {
		msgs = s.srv.Messages()
	}
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	s.sampleNow(s.now())
	for {
		select {
		case <-s.job.done:
			return
		case sig := <-sigs:
			s.onSignal(sig.(syscall.Signal))
		case <-tick.C:
			now := s.now()
			s.sampleNow(now)
			s.maybeKill(now)
		case ev, ok := <-cgEvents:
			if !ok {
				cgEvents = nil
				continue
			}
			s.onCgroupEvent(ev)
		case m, ok := <-msgs:
			if !ok {
				msgs = nil
				continue
			}
			s.onHook(m)
		}
	}
}

// sampleNow takes a sample, records it, runs the policy and redraws the
// status line: every tick, and at once on start, exit, a CUDA OOM and a
// cgroup event.
func (s *sup) sampleNow(now time.Time) {
	tot := s.hk.totals(s.gpuTotal)
	r := s.sm.collect(now, tot)
	tot.peaks(s.peaks)
	r.peaks(s.peaks)
	s.trackGrowth(r)
	s.addPolicyInputs(now, &r)
	s.last = r
	for _, p := range r.pids {
		s.everPIDs[p] = true
	}
	s.cfg.Rec.AppendSample(r.s)
	s.cfg.Rec.UpdatePeaks(s.peaks)
	s.applyPolicy(now, r.metrics)
	s.status.draw(s.statusText())
	if s.cfg.OnLive != nil {
		s.cfg.OnLive(s.live())
	}
}

// gpuTotal is device dev's memory size, for the allocator's reserved
// fraction. Sizes do not change during a run, so they are read once: a
// Devices call is several NVML queries per GPU (or a whole nvidia-smi
// run), and this is asked per hooked process and device every tick.
func (s *sup) gpuTotal(dev int) int64 {
	if s.gpuTotals == nil {
		devs := devicesOf(s.cfg.GPU)
		if len(devs) == 0 {
			return 0
		}
		s.gpuTotals = map[int]int64{}
		for _, d := range devs {
			s.gpuTotals[d.Index] = d.TotalBytes
		}
	}
	return s.gpuTotals[dev]
}

func (s *sup) onCgroupEvent(ev jobcgroup.Event) {
	msg := "cgroup memory events changed"
	switch ev.Kind {
	case "oom":
		msg = "cgroup hit its memory limit: OOM"
	case "threshold":
		msg = "cgroup usage crossed " + units.Bytes(ev.Threshold)
	}
	record := ev.Kind != "threshold" || s.firstCrossing(ev.Threshold, ev.Time)
	// Act first on the cgroup's own numbers (two small reads), then take
	// the full sample: a full one can include a PSS walk of the job, which
	// would delay the action by milliseconds.
	quick := map[string]float64{}
	for k, v := range s.last.metrics {
		quick[k] = v
	}
	s.sm.cgroup(&reading{s: store.Sample{}, metrics: quick})
	s.applyPolicy(ev.Time, quick)
	if record {
		s.event(ev.Time, "cgroup_"+ev.Kind, "cgroup", 0, msg, nil)
	}
	s.sampleNow(ev.Time)
}

// crossingQuiet is how long after a recorded crossing of a usage threshold
// the next crossings of it are acted on but not recorded: v1's eventfd
// fires on every crossing, up or down, and a job hovering at a level
// made the same "cgroup usage crossed" line four times in a second.
const crossingQuiet = time.Minute

// firstCrossing reports whether a crossing of threshold at t is worth an
// event: the first one, or the first after crossingQuiet.
func (s *sup) firstCrossing(threshold int64, t time.Time) bool {
	if s.crossed == nil {
		s.crossed = map[int64]time.Time{}
	}
	if last, ok := s.crossed[threshold]; ok && t.Sub(last) < crossingQuiet {
		return false
	}
	s.crossed[threshold] = t
	return true
}

// thresholds are the v1 usage levels worth an eventfd: every rule on the
// cgroup's usage, so its action runs at the crossing, not at the next tick.
func (s *sup) thresholds() []int64 {
	var out []int64
	lim := s.cg.Limit()
	for _, r := range s.cfg.Rules {
		switch {
		case r.Metric == policy.CgroupUsageBytes && r.Above:
			out = append(out, int64(r.Threshold))
		case r.Metric == policy.CgroupUsageFraction && r.Above && lim != nil:
			out = append(out, int64(r.Threshold*float64(*lim)))
		}
	}
	return out
}
