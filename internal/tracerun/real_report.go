package tracerun

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/snapshot"
)

// RealStats is what torchmem_hook/_trace_real.py writes to real.json when
// a --real run ends (abridged):
//
//	{"torch": "2.11.0+cu130", "steps": 2, "end": "steps", "history_api": "2.1",
//	 "max_entries": 1000000, "phases": [{"phase": "forward", "step": 1,
//	 "time_us": 1795989445164203}, ...], "snapshot": "real.pickle",
//	 "snapshot_note": "", "device": {"name": "NVIDIA H200",
//	 "total_memory": 150754820096, "major": 9, "minor": 0},
//	 "memory_stats": {"allocated_bytes.all.peak": 3331836416, ...}}
type RealStats struct {
	Torch        string      `json:"torch"`
	Steps        int         `json:"steps"`
	End          string      `json:"end"`
	HistoryAPI   string      `json:"history_api"`
	MaxEntries   int         `json:"max_entries"`
	Phases       []PhaseMark `json:"phases"`
	Snapshot     string      `json:"snapshot"`
	SnapshotNote string      `json:"snapshot_note"`
	Device       *struct {
		Name        string `json:"name"`
		TotalMemory int64  `json:"total_memory"`
		Major       int    `json:"major"`
		Minor       int    `json:"minor"`
	} `json:"device"`
	// MemoryStats is torch.cuda.memory_stats() (its numbers only).
	MemoryStats map[string]float64 `json:"memory_stats"`
}

// PhaseMark is a phase the program entered, at a time on the clock of
// the snapshot's time_us.
type PhaseMark struct {
	Phase  string `json:"phase"`
	Step   int    `json:"step"`
	TimeUS int64  `json:"time_us"`
}

// ParseRealStats reads real.json.
func ParseRealStats(r io.Reader) (*RealStats, error) {
	var st RealStats
	if err := json.NewDecoder(r).Decode(&st); err != nil {
		return nil, err
	}
	return &st, nil
}

// The memory_stats keys of torch.cuda.max_memory_allocated() and
// max_memory_reserved().
const (
	statPeakAllocated = "allocated_bytes.all.peak"
	statPeakReserved  = "reserved_bytes.all.peak"
	statOOMs          = "num_ooms"
)

// ProcessPeak is what NVML showed for the program's processes while it ran.
type ProcessPeak struct {
	Bytes   int64 // the highest sum over the job's processes in one sample
	Samples int   // samples that saw the job on the GPU
	Every   string
	Notice  string // why there is no figure, when Samples is 0
}

// Real is the report of --trace --real: the figures of the estimate
// report, measured, with where each one comes from.
type Real struct {
	*estimate.TraceResult
	// Measured is always true: the JSON says the figures are not predicted.
	Measured      bool   `json:"measured"`
	GPUName       string `json:"measured_gpu"`
	GPUTotalBytes int64  `json:"measured_gpu_memory_bytes"`
	// The sources of the three peaks, in words.
	PeakAllocatedSource string `json:"peak_allocated_source"`
	PeakReservedSource  string `json:"peak_reserved_source"`
	ProcessSource       string `json:"process_source"`
	// ProcessMeasured is false when NVML could not see the process: then
	// ProcessBytes is modelled (reserved + context + libraries).
	ProcessMeasured bool `json:"process_measured"`
	// TraceEntries is the allocator history's length; TracePeakReserved
	// its replayed reserved peak (the trace's own figure for the peak).
	TraceEntries      int      `json:"trace_entries"`
	TracePeakReserved int64    `json:"trace_peak_reserved_bytes"`
	Notices           []string `json:"notices,omitempty"`
	// SnapshotFile is where --snapshot wrote the run's snapshot ("" when
	// not asked, or the run left none: a notice says why).
	SnapshotFile string `json:"snapshot_file,omitempty"`
}

// Measure turns what a --real run left (its stats, its snapshot when it
// could be written, NVML's samples) into the report. The peaks come from
// memory_stats (what torch.cuda.max_memory_allocated()/reserved() return),
// else from replaying the snapshot's trace; the phase of the peak and the
// sites alive at it from the trace's peak of allocated memory.
func Measure(st *RealStats, s *snapshot.Snapshot, proc ProcessPeak, end *estimate.TraceNote) *Real {
	res := &estimate.Result{Model: "traced script (run on the GPU)", Family: "trace",
		CUDAContextBytes: estimate.CUDAContextBytes, LibraryBytes: estimate.LibraryBytes}
	r := &Real{TraceResult: &estimate.TraceResult{Result: res, Device: "real", Torch: st.Torch, Steps: st.Steps, End: end},
		Measured: true}
	if st.Device != nil {
		r.GPUName, r.GPUTotalBytes = st.Device.Name, st.Device.TotalMemory
	}
	if st.SnapshotNote != "" {
		r.Notices = append(r.Notices, st.SnapshotNote)
	}
	dev, peak, reservedPeak := -1, snapshot.Level{}, int64(0)
	if s != nil {
		dev, peak, reservedPeak = tracePeak(s)
		if dev < 0 {
			r.Notices = append(r.Notices, "the snapshot holds no allocator trace: no phase or sites of the peak")
		}
	}
	if dev >= 0 {
		r.TraceEntries, r.LiveBytesPeak, r.TracePeakReserved = len(s.Traces[dev]), peak.Allocated, reservedPeak
		r.Events = r.TraceEntries
	}
	r.peaks(st, dev >= 0)
	res.OOM = st.MemoryStats[statOOMs] > 0
	r.process(proc)
	if dev >= 0 {
		res.PeakPhase = peakPhase(st.Phases, s, dev, peak)
		bd := snapshot.BreakdownAt(s, dev, peak.Index)
		r.breakdown(bd, peak.Allocated)
		r.Sites = peakSites(s, dev)
	} else {
		r.breakdown(snapshot.Breakdown{}, 0)
	}
	return r
}

// tracePeak is the device whose trace peaks highest, the level of its
// peak of allocated (requested) bytes and its reserved peak; dev is -1
// without a trace.
func tracePeak(s *snapshot.Snapshot) (dev int, peak snapshot.Level, reserved int64) {
	dev = -1
	for d := range s.Traces {
		if len(s.Traces[d]) == 0 {
			continue
		}
		p := s.Peak(d)
		if dev < 0 || p.Allocated > peak.Allocated {
			dev, peak = d, p
		}
	}
	if dev >= 0 {
		start := s.Replay(dev, func(l snapshot.Level, _ *snapshot.TraceEntry) { reserved = max(reserved, l.Reserved) })
		reserved = max(reserved, start.Reserved)
	}
	return dev, peak, reserved
}

// peaks takes the peaks from memory_stats, else from the trace.
func (r *Real) peaks(st *RealStats, haveTrace bool) {
	a, okA := st.MemoryStats[statPeakAllocated]
	v, okR := st.MemoryStats[statPeakReserved]
	switch {
	case okA && okR:
		r.PeakAllocatedBytes, r.PeakReservedBytes = int64(a), int64(v)
		r.PeakAllocatedSource = "torch.cuda.memory_stats() " + statPeakAllocated
		r.PeakReservedSource = "torch.cuda.memory_stats() " + statPeakReserved
	case haveTrace:
		r.PeakAllocatedBytes, r.PeakReservedBytes = r.LiveBytesPeak, r.TracePeakReserved
		r.PeakAllocatedSource = "the snapshot's trace replayed (requested bytes, before the allocator's rounding)"
		r.PeakReservedSource = "the snapshot's trace replayed (segments)"
		r.Notices = append(r.Notices, "torch.cuda.memory_stats() was not recorded: the peaks are the trace's")
	default:
		r.PeakAllocatedSource, r.PeakReservedSource = "not measured", "not measured"
		r.Notices = append(r.Notices, "neither memory_stats nor a snapshot came back: nothing was measured")
	}
}

// process fills nvidia-smi's figure: NVML's peak for the job, else the
// model's reserved + context + libraries, said so.
func (r *Real) process(p ProcessPeak) {
	if p.Samples > 0 && p.Bytes > 0 {
		r.ProcessBytes, r.ProcessMeasured = p.Bytes, true
		// Measured, the rest of the process is one figure: the context
		// with the libraries (the JSON's cuda_context_bytes), not split.
		r.CUDAContextBytes, r.LibraryBytes = max(0, p.Bytes-r.PeakReservedBytes), 0
		r.ProcessSource = fmt.Sprintf("NVML, the job's processes sampled every %s (%d samples), highest", p.Every, p.Samples)
		return
	}
	r.ProcessBytes = r.PeakReservedBytes + r.CUDAContextBytes + r.LibraryBytes
	r.ProcessSource = "not measured: reserved + the modelled CUDA context and libraries"
	notice := p.Notice
	if notice == "" {
		notice = "NVML never saw the program's process on the GPU"
	}
	r.Notices = append(r.Notices, "nvidia-smi's figure is modelled: "+notice)
}

// breakdownNames maps the snapshot's categories to the estimate report's.
var breakdownNames = map[snapshot.Category]string{
	snapshot.CatParameters:          estimate.CatWeights.String(),
	snapshot.CatGradients:           estimate.CatGrads.String(),
	snapshot.CatOptimizerState:      estimate.CatOptState.String(),
	snapshot.CatActivations:         estimate.CatActivations.String(),
	snapshot.CatAutogradTemporaries: estimate.CatTemporaries.String(),
	snapshot.CatInputs:              estimate.CatData.String(),
	snapshot.CatOther:               "other",
}

// breakdown lists what the trace's peak held by category (requested
// bytes), then what lies between the layers the report shows: the
// allocator's rounding up to peak allocated, its cache up to peak
// reserved, and the rest of the process. The trace's peak and the
// stats' peaks can be moments apart; a step that would be negative is
// left out.
func (r *Real) breakdown(bd snapshot.Breakdown, tracePeak int64) {
	for _, c := range bd.Categories {
		r.Breakdown = append(r.Breakdown, estimate.Item{Name: breakdownNames[c.Category], Bytes: c.Bytes})
	}
	steps := []estimate.Item{
		{Name: "allocator_rounding", Bytes: r.PeakAllocatedBytes - tracePeak},
		{Name: "allocator_cache_and_fragmentation", Bytes: r.PeakReservedBytes - r.PeakAllocatedBytes},
	}
	if r.ProcessMeasured {
		steps = append(steps, estimate.Item{Name: "cuda_context_and_libraries", Bytes: r.ProcessBytes - r.PeakReservedBytes})
	} else {
		steps = append(steps, estimate.Item{Name: "cuda_context", Bytes: r.CUDAContextBytes},
			estimate.Item{Name: "cuda_libraries", Bytes: r.LibraryBytes})
	}
	if tracePeak == 0 {
		steps = steps[1:]
	}
	for _, it := range steps {
		if it.Bytes > 0 {
			r.Breakdown = append(r.Breakdown, it)
		}
	}
}

// peakPhase names the phase at the trace's peak: the last phase mark at or
// before its time, else (no marks, or a snapshot without times) the
// snapshot's own phase rule, which knows no step.
func peakPhase(marks []PhaseMark, s *snapshot.Snapshot, dev int, peak snapshot.Level) string {
	if peak.TimeUS > 0 && len(marks) > 0 {
		i := sort.Search(len(marks), func(i int) bool { return marks[i].TimeUS > peak.TimeUS })
		if i > 0 {
			return estimate.TracePhaseName(marks[i-1].Phase, marks[i-1].Step)
		}
	}
	if peak.Index < 0 {
		return "before the trace's first entry"
	}
	return snapshot.NewClassifier(s, dev).PhaseAt(peak.Index).String()
}

// peakSites are the lines holding the most memory at the trace's peak.
func peakSites(s *snapshot.Snapshot, dev int) []estimate.TraceSite {
	top := snapshot.TopGroups(s, snapshot.TopOptions{Depth: 1})
	var out []estimate.TraceSite
	for _, p := range top.AtPeak {
		if p.Device != dev {
			continue
		}
		for _, site := range p.Sites {
			if len(out) == maxRealSites {
				break
			}
			out = append(out, estimate.TraceSite{Where: frameWhere(site.Key), Op: site.Via, Bytes: site.Bytes,
				Count: site.Count, Frames: site.Frames})
		}
	}
	return out
}

// pyLine is a site key of one Python frame, "file.py:75 name".
var pyLine = regexp.MustCompile(`^([^ ]+\.py:\d+) (\S+)$`)

// frameWhere writes a site key the way the tracer writes a frame
// ("file.py:75:name"), so both reports print sites alike.
func frameWhere(key string) string {
	if m := pyLine.FindStringSubmatch(key); m != nil {
		return m[1] + ":" + m[2]
	}
	return key
}

// maxRealSites: the sites the report lists, as many as the meta trace's.
const maxRealSites = 10
