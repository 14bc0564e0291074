package supervisor

import (
	"fmt"
	"strconv"
	"time"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/oomexplain"
	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/procfs/psi"
)

// policyInputs are the policy metrics a single sample does not give: the
// time to OOM needs the samples before it (policy.Project), and the job
// cgroup's memory pressure (v2) is read only when a rule asks for it (the
// host's comes with every sample). They are added to each
// reading's metrics before the policy runs.
type policyInputs struct {
	started bool
	// psiDir is the job cgroup's directory when its memory.pressure is the
	// source (v2), "" for the host's pressure the sample reads each tick;
	// psiOn: a rule uses PSI and it was readable.
	psiDir string
	psiOn  bool
	cgroup policy.Trend
	gpus   map[int]*policy.Trend
	// cgProj and gpuProj are this tick's projections (nil: none).
	cgProj, gpuProj *projection
	// last is the latest projection made; fired the one a time-to-OOM rule
	// first acted on. The post-mortem states one of them.
	last, fired *projection
	ext         externalActions
}

// projection is a policy.Projection of one resource at a time.
type projection struct {
	policy.Projection
	resource string // "cgroup", "gpu0"
	at       time.Time
	rule     string
}

// addPolicyInputs puts PSI and the time to OOM into r's metrics.
func (s *sup) addPolicyInputs(now time.Time, r *reading) {
	in := &s.in
	if !in.started {
		in.started = true
		s.checkInputs(r)
	}
	s.drainActions()
	if in.psiOn {
		s.addPSI(r)
	}
	in.cgProj, in.gpuProj = nil, nil
	if r.s.CgroupUsage != nil && r.limit != nil && *r.limit > 0 {
		in.cgroup.Add(now, float64(*r.s.CgroupUsage))
		if p, ok := in.cgroup.Project(float64(*r.limit), now); ok {
			in.cgProj = &projection{Projection: p, resource: "cgroup", at: now}
			r.metrics[policy.CgroupTimeToOOM] = p.Seconds
		}
	}
	in.gpuProj = s.gpuProjection(now, r)
	if in.gpuProj != nil {
		r.metrics[policy.GPUTimeToOOM] = in.gpuProj.Seconds
	}
	for _, p := range []*projection{in.cgProj, in.gpuProj} {
		if p != nil && (in.last == nil || p.at != in.last.at || p.Seconds < in.last.Seconds) {
			in.last = p
		}
	}
}

// gpuProjection is the soonest time to OOM over the GPUs the job uses
// (all of them while it uses none yet), each device's used memory against
// its total.
func (s *sup) gpuProjection(now time.Time, r *reading) *projection {
	uses := false
	for _, v := range r.s.GPUJobUsed {
		uses = uses || (v != nil && *v > 0)
	}
	var best *projection
	for i, used := range r.s.GPUUsed {
		total := s.gpuTotal(i)
		if used == nil || total <= 0 || (uses && (i >= len(r.s.GPUJobUsed) || r.s.GPUJobUsed[i] == nil || *r.s.GPUJobUsed[i] == 0)) {
			continue
		}
		if s.in.gpus == nil {
			s.in.gpus = map[int]*policy.Trend{}
		}
		tr := s.in.gpus[i]
		if tr == nil {
			tr = &policy.Trend{}
			s.in.gpus[i] = tr
		}
		tr.Add(now, float64(*used))
		if p, ok := tr.Project(float64(total), now); ok && (best == nil || p.Seconds < best.Seconds) {
			best = &projection{Projection: p, resource: "gpu" + strconv.Itoa(i), at: now}
		}
	}
	return best
}

// checkInputs finds where PSI comes from and says once, at the start,
// which rules can never fire here: their metric has no source.
func (s *sup) checkInputs(r *reading) {
	var psiRule bool
	for _, r := range s.cfg.Rules {
		switch r.Metric {
		case policy.PSISomeAvg10, policy.PSIFullAvg10:
			psiRule = true
		case policy.CgroupTimeToOOM:
			if s.cg == nil || s.cg.Limit() == nil {
				s.notice(tr(s.lang())("notice.inert_no_limit", r.Name, r.Metric))
			}
		case policy.GPUTimeToOOM:
			if len(devicesOf(s.cfg.GPU)) == 0 {
				s.notice(tr(s.lang())("notice.inert_no_gpu", r.Name, r.Metric))
			}
		}
	}
	if !psiRule {
		return
	}
	if s.cg != nil && s.cg.Handle().Version == 2 {
		s.in.psiDir = s.cg.Dir()
	}
	if _, err := s.readPSI(r); err != nil {
		s.notice(tr(s.lang())("notice.inert_psi", err.Error()))
		return
	}
	s.in.psiOn = true
}

func (s *sup) addPSI(r *reading) {
	p, err := s.readPSI(r)
	if err != nil {
		return // gone for now: the rules' condition is false, not an error
	}
	if p.Some != nil {
		r.metrics[policy.PSISomeAvg10] = p.Some.Avg10
	}
	if p.Full != nil {
		r.metrics[policy.PSIFullAvg10] = p.Full.Avg10
	}
}

// readPSI is the job cgroup's memory.pressure on v2 (internal/cgroup's
// reader), else the host's /proc/pressure/memory as this tick's sample
// read it (no second read of the file).
func (s *sup) readPSI(r *reading) (psi.Stats, error) {
	if s.in.psiDir == "" {
		if r.psi == nil {
			return psi.Stats{}, fmt.Errorf("no memory pressure (PSI) on this host (%s/pressure/memory)", s.cfg.ProcRoot)
		}
		return *r.psi, nil
	}
	p, err := cgroup.ReadPressure(s.in.psiDir)
	if err != nil {
		return psi.Stats{}, err
	}
	if p == nil {
		return psi.Stats{}, fmt.Errorf("no memory pressure (PSI) for the job's cgroup (%s/memory.pressure)", s.in.psiDir)
	}
	return *p, nil
}

// noteFired keeps the latest projection a time-to-OOM rule acted on, for
// the post-mortem: the one nearest the end is the one that was borne out
// (an early warning made during start-up's ramp, "~15s" three minutes
// before the end, would read as a wrong prediction).
func (s *sup) noteFired(d policy.Decision) {
	p := s.in.cgProj
	if d.Rule.Metric == policy.GPUTimeToOOM {
		p = s.in.gpuProj
	}
	if p != nil {
		c := *p
		c.rule = d.Rule.Name
		s.in.fired = &c
	}
}

// timeToOOM is the projection the post-mortem states: the one a rule acted
// on, else the last one if it was made within TrendWindow of the end.
func (s *sup) timeToOOM(end time.Time) *oomexplain.TimeToOOM {
	p := s.in.fired
	if p == nil && s.in.last != nil && end.Sub(s.in.last.at) <= policy.TrendWindow {
		p = s.in.last
	}
	if p == nil {
		return nil
	}
	return &oomexplain.TimeToOOM{Resource: p.resource, Seconds: p.Seconds, BytesPerSecond: p.BytesPerSecond,
		Before: end.Sub(p.at).Seconds(), Rule: p.rule}
}

// projectionText is the status line's field: "OOM in ~3m at +40 MiB/s",
// the sooner of the cgroup's and the GPUs'.
func (s *sup) projectionText() string {
	p := s.in.cgProj
	if g := s.in.gpuProj; g != nil && (p == nil || g.Seconds < p.Seconds) {
		p = g
	}
	if p == nil || p.Seconds > 24*3600 {
		return ""
	}
	what := ""
	if p.resource != "cgroup" {
		what = p.resource + " "
	}
	return tr(s.lang())("status.oom_in", what, roughDuration(p.Seconds), rateText(p.BytesPerSecond))
}

// roughDuration: "42s", "3m", "2h"; a projection is not more precise.
func roughDuration(sec float64) string {
	switch {
	case sec < 90:
		return fmt.Sprintf("%.0fs", sec)
	case sec < 90*60:
		return fmt.Sprintf("%.0fm", sec/60)
	}
	return fmt.Sprintf("%.0fh", sec/3600)
}

func rateText(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", b/(1<<10))
}
