package estimate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/torchmem/torchmem/internal/allocconf"
)

// TraceResult is the estimate of a traced script: the Result every
// estimate has, and what only a trace knows.
type TraceResult struct {
	*Result
	Device string `json:"trace_device"`
	Torch  string `json:"trace_torch"`
	Steps  int    `json:"trace_steps"`
	Events int    `json:"trace_events"`
	// LiveBytesPeak: the most bytes of storages alive at once, before the
	// allocator's rounding (what the meta and the real run must agree on).
	LiveBytesPeak int64 `json:"live_bytes_peak"`
	// Sites: where the memory alive at the peak was allocated, largest first.
	Sites    []TraceSite `json:"top_sites_at_peak"`
	Warnings []TraceNote `json:"warnings,omitempty"`
	// NoteCounts: the notes of each kind (Warnings has each site once, at
	// most 20 sites a kind).
	NoteCounts map[string]int `json:"note_counts,omitempty"`
	End        *TraceNote     `json:"end"`
	// Distributed: the figures are one rank's (rank 0 of World).
	Distributed *TraceDist `json:"distributed,omitempty"`
	// peakAt: the event of the peak (-1: none)
	peakAt int
	// StatesNotMade: trainable parameters that got no gradient in the
	// traced steps, and the optimizer states a longer run would make for
	// them (not in the peak: a parameter never used never gets them).
	StatesNotMade *StatesNotMade `json:"states_not_made,omitempty"`
	// UnusedGraph: at the peak, minTraceLeverSaving or more was saved by
	// autograd for a backward that never came (unused_graph in the
	// breakdown), the largest of it made at Site.
	UnusedGraph *UnusedGraph `json:"unused_graph,omitempty"`
}

// UnusedGraph is what a forward under grad mode whose graph no backward
// used holds at the peak: evaluation, sampling or a metric computed
// without torch.no_grad() keeps every tensor autograd saves until its
// output goes.
type UnusedGraph struct {
	Bytes int64     `json:"bytes"`
	Site  TraceSite `json:"largest_site"`
	// Caller: the frame of the largest site's stack that called the model
	// ("file:line:function", the first that is no forward): where
	// torch.no_grad() would go.
	Caller string `json:"caller,omitempty"`
}

// forwardCaller: the innermost of frames ("file:line:function", innermost
// first) that is not a module's forward or a call into one.
func forwardCaller(frames []string) string {
	for _, f := range frames {
		fn := f[strings.LastIndexByte(f, ':')+1:]
		if fn != "forward" && fn != "__call__" && !strings.HasPrefix(fn, "_") {
			return f
		}
	}
	if len(frames) > 0 {
		return frames[len(frames)-1]
	}
	return ""
}

// unusedGraph: the peak's unused graph, when it is worth a note.
func unusedGraph(r *Result, sites []TraceSite) *UnusedGraph {
	var n int64
	for _, it := range r.Breakdown {
		if it.Name == CatUnusedGraph.String() {
			n = it.Bytes
		}
	}
	if n < minTraceLeverSaving {
		return nil
	}
	for _, s := range sites {
		if s.Category == CatUnusedGraph.String() {
			return &UnusedGraph{Bytes: n, Site: s, Caller: forwardCaller(s.Frames)}
		}
	}
	return &UnusedGraph{Bytes: n}
}

// TraceSite is the memory alive at the peak that one line made.
type TraceSite struct {
	Where    string   `json:"where"`
	Op       string   `json:"op"`
	Module   string   `json:"module,omitempty"`
	Category string   `json:"category"`
	Bytes    int64    `json:"bytes"`
	Count    int      `json:"count"`
	Frames   []string `json:"frames"`
}

// maxTraceSites: the sites the report lists.
const maxTraceSites = 10

// traceCategory is what an allocation counts as in the breakdown. What
// the forward pass makes is an activation when it is still alive once the
// backward has begun (autograd saved it, or it is the loss), a temporary
// when it is gone before, and an unused graph when autograd saved it and
// freed it outside its engine: the forward ran under grad mode and its
// graph was dropped unused (evaluation without torch.no_grad(), a metric
// kept with its graph).
func traceCategory(kind string, survivedToBackward, unused bool) Category {
	switch kind {
	case "param", "param4", "buffer":
		return CatWeights
	case "grad":
		return CatGrads
	case "optstate":
		return CatOptState
	case "autocast": // meta mode's autocast: a weight's cast, cached to the region's end
		return CatAutocast
	case "opttemp":
		return CatOptTemp
	case "loaded": // torch.load's, on the GPU: a checkpoint (the parameters' copies are weights)
		return CatLoaded
	case "data":
		return CatData
	case "fwd":
		if unused {
			return CatUnusedGraph
		}
		if survivedToBackward {
			return CatActivations
		}
	}
	return CatTemporaries
}

// categories gives every allocation its breakdown category.
func (t *Trace) categories() []Category {
	survived := t.survivedToBackward()
	cats := make([]Category, len(t.Allocs))
	for i, a := range t.Allocs {
		cats[i] = traceCategory(a.Kind, survived[i], a.Unused)
	}
	return cats
}

// survivedToBackward: for each allocation, whether it was alive when a
// backward began (one that was never freed: whether one began after it
// was made).
func (t *Trace) survivedToBackward() []bool {
	bornAt := make([]int, len(t.Allocs)) // backward phases begun before it was made
	survived := make([]bool, len(t.Allocs))
	backwards, p := 0, 0
	for i, ev := range t.events {
		for p < len(t.phases) && t.phases[p].at <= i {
			if t.phases[p].phase == "backward" {
				backwards++
			}
			p++
		}
		if ev.free {
			survived[ev.alloc] = backwards > bornAt[ev.alloc]
		} else {
			bornAt[ev.alloc] = backwards
			survived[ev.alloc] = false
		}
	}
	for p < len(t.phases) {
		if t.phases[p].phase == "backward" {
			backwards++
		}
		p++
	}
	freed := make([]bool, len(t.Allocs))
	for _, ev := range t.events {
		if ev.free {
			freed[ev.alloc] = true
		}
	}
	for i := range t.Allocs {
		if !freed[i] {
			survived[i] = backwards > bornAt[i]
		}
	}
	return survived
}

// phaseName is the phase in the words of the built-in estimate's report.
func phaseName(phase string, step int) string {
	switch phase {
	case "setup":
		return "setup (model and data to the GPU)"
	case "forward":
		return fmt.Sprintf("forward, step %d", step)
	case "backward":
		return fmt.Sprintf("backward, step %d", step)
	case "after_backward":
		return fmt.Sprintf("after backward, step %d", step)
	case "optimizer":
		return fmt.Sprintf("optimizer step %d", step)
	case "after_step":
		return fmt.Sprintf("zero_grad and data, step %d", step)
	}
	return fmt.Sprintf("%s, step %d", phase, step)
}

// traceSink is told what the allocator does, for --snapshot.
type traceSink interface {
	segment(e segEvent)
	alloc(a int32, b *block, requested int64)
	free(a int32, b *block)
}

// TraceReplay says how to replay a trace.
type TraceReplay struct {
	// Limit is what the allocator may reserve (0: unbounded).
	Limit int64
	// ComputeCapability sizes the cuBLAS workspaces (90 if 0).
	ComputeCapability int
	// GPUBytes: the GPU's memory (0: unknown), which sizes an expandable
	// segment's address space.
	GPUBytes int64
	// expandable, noMaxSplit: the expandable-segments and no-max-split
	// levers' what-ifs, whatever the trace's Alloc says.
	expandable, noMaxSplit bool
	// proc: the process the trace runs in after other jobs
	// (ReplayTracesOneProcess); nil, a fresh one.
	proc *process
	// peaksFrom: the peaks count from this event on (> 0), as after
	// empty_cache() and torch.cuda.reset_peak_memory_stats() there: the
	// training after a probe (trace_probe.go), whose out-of-memory error
	// the program caught.
	peaksFrom int
}

// configure sets a's limit and the rules of PYTORCH_CUDA_ALLOC_CONF the
// model follows (t's, under the memory fraction the job sets: its cap is
// a limit, traceBudget's; its collection, the allocator's own).
func (o TraceReplay) configure(a *allocator, t *Trace) {
	conf := t.Alloc
	conf.Fraction, _ = t.MemoryFraction()
	conf.Expandable = conf.Expandable || o.expandable
	if o.noMaxSplit {
		conf.MaxSplit = 0
	}
	fresh := newAllocator(o.Limit, conf, o.GPUBytes)
	a.limit, a.maxSplit, a.expandable, a.roundup, a.va = fresh.limit, fresh.maxSplit, fresh.expandable, fresh.roundup, fresh.va
	a.gcAt = fresh.gcAt
}

// cublasWorkspace is the rule of walk.go's cublasWorkspaceBytes: PyTorch
// takes one cuBLAS workspace per handle from the caching allocator,
// 4096 KiB*8 on sm90+, else 4096 KiB*2 + 16 KiB*8. The meta device runs no
// cuBLAS, so the replay adds them where a GPU run makes them: at each
// thread's first cuBLAS call (the main thread's outside a backward, the
// autograd thread's in one), just after that call's output; both are kept
// for the process's life. (At the phase's start instead, the replay of a
// Llama-style model put the autograd thread's 32 MiB in a block the
// loss's backward then found taken, and made a segment its H200 run, the
// snapshot says, did not.)
func cublasWorkspace(cc int) int64 {
	if cc == 0 || cc >= 90 {
		return 4096 * 8 * 1024
	}
	return 4096*1024*2 + 16*1024*8
}

// replay runs the trace's events through the allocator model up to event
// stop (all with stop < 0) and returns the machine and the blocks still held.
func (t *Trace) replay(cats []Category, o TraceReplay, stop int, sink traceSink) (*machine, map[int32]*block, int64, int) {
	m := &machine{}
	o.configure(&m.alloc, t)
	if sink != nil {
		m.alloc.notify = sink.segment
	}
	blocks := make(map[int32]*block, 1024)
	var live, livePeak int64
	peakAt, p := -1, 0
	ws := map[string]bool{} // the threads' workspaces made: "forward" (main), "backward" (autograd)
	if pr := o.proc; pr != nil && pr.jobs > 0 {
		// a warm process: its allocator as the last job left it, and the
		// cuBLAS workspaces it made already (the job's baseline)
		m.alloc = pr.alloc
		o.configure(&m.alloc, t)
		ws["forward"], ws["backward"] = pr.fwd != nil, pr.bwd != nil
	}
	e, thread := 0, "forward"
	for i, ev := range t.events {
		if stop >= 0 && i >= stop {
			break
		}
		for ; e < len(t.emptied) && t.emptied[e] <= i; e++ {
			m.alloc.emptyCache() // the program's torch.cuda.empty_cache()
		}
		if i == o.peaksFrom && i > 0 {
			m.alloc.emptyCache() // (the probe's cache, given back at the limit before a failure)
			m.resetPeaks()
			peakAt = -1
		}
		for p < len(t.phases) && t.phases[p].at <= i {
			m.phase = phaseName(t.phases[p].phase, t.phases[p].step)
			thread = "forward"
			if t.phases[p].phase == "backward" {
				thread = "backward"
			}
			p++
		}
		a := &t.Allocs[ev.alloc]
		if ev.free {
			b, ok := blocks[ev.alloc]
			if !ok {
				continue // not made: a what-if of TraceLevers sized it 0
			}
			delete(blocks, ev.alloc)
			c := cats[ev.alloc]
			m.cur[c] -= b.size
			m.total -= b.size
			live -= a.Bytes
			if sink != nil {
				sink.free(ev.alloc, b)
			}
			m.alloc.release(b)
			continue
		}
		if m.phase == "" {
			m.phase = phaseName(a.Phase, a.Step)
		}
		if a.Bytes == 0 {
			continue // (the trace records none of 0 bytes: a what-if's)
		}
		before := m.peak
		m.stream = a.Stream
		tn := newSunk(m, sink, ev.alloc, a.Bytes, cats[ev.alloc], a.Bytes)
		blocks[ev.alloc] = tn.blk
		live += a.Bytes
		livePeak = max(livePeak, live)
		replayConvWorkspace(m, sink, ev.alloc, a)
		if !ws[thread] && cublasCalls(a.Op) {
			ws[thread] = true
			replayCublasWorkspace(m, sink, o, thread)
		}
		if m.peak > before {
			peakAt = i
		}
	}
	if stop < 0 && e < len(t.emptied) {
		m.alloc.emptyCache() // called after the last allocation or free
	}
	return m, blocks, livePeak, peakAt
}

// replayCublasWorkspace makes the thread's cuBLAS workspace (kept for the
// process's life).
func replayCublasWorkspace(m *machine, sink traceSink, o TraceReplay, thread string) {
	stream := m.stream
	m.stream = 0 // (the program's threads' own streams)
	tn := newSunk(m, sink, -1, cublasWorkspace(o.ComputeCapability), CatWorkspace, -1)
	m.stream = stream
	if o.proc != nil && thread == "forward" {
		o.proc.fwd = tn.blk
	} else if o.proc != nil {
		o.proc.bwd = tn.blk
	}
}

// cublasCalls: whether the op making an allocation runs cuBLAS on a GPU
// (the matrix products; torch's linear and matmul come as these).
func cublasCalls(op string) bool {
	switch strings.TrimSuffix(op, ".default") {
	case "aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm", "aten.addbmm", "aten.mv", "aten.addmv",
		"aten.dot", "aten.vdot", "aten._addmm_activation":
		return true
	}
	return false
}

// replayConvWorkspace: a tensor a convolution writes on the GPU (its
// output, or backward the input's and the weight's gradients) comes with
// cuDNN's workspace for that call, taken and freed right after it, as the
// built-in walk has it (cudnnConvWorkspace). The trace, made on meta or
// CPU tensors, has no such allocation of its own.
func replayConvWorkspace(m *machine, sink traceSink, id int32, a *TraceAlloc) {
	if !cudnnWrites(a) {
		return
	}
	w := cudnnConvWorkspace(a.Bytes)
	if w <= 0 {
		return
	}
	t := newSunk(m, sink, id, w, CatWorkspace, w)
	if sink != nil {
		sink.free(id, t.blk)
	}
	m.drop(t)
}

// newSunk makes a tensor of bytes on m and tells sink (the snapshot
// writer), when there is one, of the segment it may have made and of the
// allocation: requested bytes as the program asked (< 0: the block's).
func newSunk(m *machine, sink traceSink, id int32, bytes int64, cat Category, requested int64) *tensor {
	t := m.new(bytes, 1, cat)
	if sink != nil {
		if requested < 0 {
			requested = t.blk.size
		}
		sink.alloc(id, t.blk, requested)
	}
	return t
}

// cudnnWrites: whether cuDNN computes a (a convolution's output, or its
// input's or weight's gradient; a bias gradient, one dimension, is a
// reduction outside cuDNN).
func cudnnWrites(a *TraceAlloc) bool {
	switch a.Op {
	case "aten.convolution.default":
		return true
	case "aten.convolution_backward.default":
		return strings.Contains(a.Shape, ",")
	}
	return false
}

// ReplayTracesOneProcess replays traces one after another in one process,
// as a measuring harness runs its jobs (process): each starts from the
// allocator the last one left after del, empty_cache() and
// reset_peak_memory_stats(), with the cuBLAS workspaces already made, and
// its peak allocated leaves them out (the harness's "minus the baseline").
// For comparing traces with such measurements (the H200 capture); a
// user's job is a fresh process, ReplayTrace.
func ReplayTracesOneProcess(ts []*Trace, o TraceReplay) []*Result {
	p := &process{}
	out := make([]*Result, 0, len(ts))
	for _, t := range ts {
		o.proc = p
		cats := t.categories()
		m, _, _, _ := t.replay(cats, o, -1, nil)
		out = append(out, t.result(cats, m))
		p.leave(m.alloc)
	}
	return out
}

// result is the estimate a replay of t on m gives.
func (t *Trace) result(cats []Category, m *machine) *Result {
	conf := t.allocConf(&m.alloc)
	r := &Result{Model: "traced script", Family: "trace", Params: t.paramCount(cats) + t.hostParams(), TrainableParams: t.trainableCount(),
		PeakAllocatedBytes: m.peak, PeakReservedBytes: m.alloc.peak,
		CacheReleases: m.alloc.releases, OOM: m.alloc.oom, CachedFreeBytes: m.alloc.cachedFree(),
		CUDAContextBytes: CUDAContextBytes, LibraryBytes: LibraryBytes, PeakPhase: m.peakPhase,
		AllocConf: conf.String(), GCIdle: conf.GCIdle(), Collections: m.alloc.collections}
	r.fillProcess(m)
	for _, it := range t.outside {
		r.addOutside(it)
	}
	if d := t.Dist; d.nccl() {
		r.addOutside(ncclItem(d.World))
	}
	return r
}

// ReplayTrace predicts the GPU memory of a traced script: its allocations
// replayed through the caching-allocator model.
func ReplayTrace(t *Trace, o TraceReplay) *TraceResult {
	cats := t.categories()
	m, _, livePeak, peakAt := t.replay(cats, o, -1, nil)
	r := t.result(cats, m)
	tr := &TraceResult{Result: r, Device: t.Header["device"], Torch: t.Header["torch"], Events: len(t.events),
		LiveBytesPeak: livePeak, Warnings: t.Warnings, NoteCounts: t.NoteCounts(), End: t.End, Distributed: t.Dist}
	tr.Steps = t.stepsDone()
	tr.peakAt = peakAt
	if peakAt >= 0 {
		_, held, _, _ := t.replay(cats, o, peakAt+1, nil)
		tr.Sites = t.sites(held, cats)
	}
	tr.UnusedGraph = unusedGraph(r, tr.Sites)
	if t.Pending != nil {
		p := *t.Pending
		p.PeakAllocatedBytes = r.PeakAllocatedBytes + p.Bytes
		tr.StatesNotMade = &p
	}
	return tr
}

// StatesNotMade: an optimizer makes a parameter's states at its first
// gradient, and some trainable parameters got none in the traced steps
// (wav2vec2's LayerDrop skips whole layers at random; a branch the data
// did not take). Their states, sized as the others' per byte of weight,
// come when they first train, and stay; PeakAllocatedBytes is the peak a
// later step reaches with them made.
type StatesNotMade struct {
	Bytes              int64 `json:"bytes"`
	Params             int64 `json:"params"`
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes_with_them"`
}

// stepsDone: the optimizer steps the trace covers (the step number of its
// last phase change, less one when it ended after a step).
func (t *Trace) stepsDone() int {
	n := 0
	for _, p := range t.phases {
		if p.phase == "after_step" {
			n = p.step - 1
		}
	}
	return n
}

// paramCount: the elements of the parameters, from their dtypes' sizes.
// Only the weights still held when the trace ends count: a weight moved or
// cast (.cuda(), .half()) leaves a freed copy of itself behind.
func (t *Trace) paramCount(cats []Category) int64 {
	freed := make([]bool, len(t.Allocs))
	for _, e := range t.events {
		if e.free {
			freed[e.alloc] = true
		}
	}
	var n int64
	for i, a := range t.Allocs {
		if cats[i] != CatWeights || freed[i] {
			continue
		}
		switch a.Kind {
		case "param":
			n += a.Bytes / dtypeBytes(a.DType)
		case "param4": // bitsandbytes' 4-bit weights: two values a byte, whatever the storage dtype
			n += 2 * a.Bytes
		}
	}
	return n
}

// hostParams: the parameters FSDP's CPU offload keeps on the host.
func (t *Trace) hostParams() int64 {
	if t.Dist == nil {
		return 0
	}
	return t.Dist.HostParams
}

// trainableCount is the elements of the gradients the first step with any
// made: one per trainable parameter (a tied weight has one, accumulation
// adds into it, zero_grad without set_to_none keeps it), as the built-in
// and PEFT's print_trainable_parameters() count, and those no traced step
// gave a gradient (the Q event's); 0 without a backward.
func (t *Trace) trainableCount() int64 {
	first := -1
	for _, a := range t.Allocs {
		if a.Kind == "grad" && (first < 0 || a.Step < first) {
			first = a.Step
		}
	}
	var n int64
	for i, a := range t.Allocs {
		if a.Kind != "grad" || a.Step != first {
			continue
		}
		if e, ok := t.gradElems[int32(i)]; ok { // a sparse gradient's part
			n += e
			continue
		}
		n += a.Bytes / dtypeBytes(a.DType)
	}
	if t.Pending != nil { // trainable, with no gradient in any traced step
		n += t.Pending.Params
	}
	return n
}

func dtypeBytes(dt string) int64 {
	switch dt {
	case "float64", "int64", "complex64":
		return 8
	case "float16", "bfloat16", "int16":
		return 2
	case "int8", "uint8", "bool", "float8_e4m3fn", "float8_e5m2":
		return 1
	case "complex128":
		return 16
	}
	return 4
}

// sites groups the blocks held at the peak by the line that made them.
func (t *Trace) sites(held map[int32]*block, cats []Category) []TraceSite {
	by := map[string]*TraceSite{}
	for i, b := range held {
		a := &t.Allocs[i]
		frames := t.Stacks[a.Stack]
		where := "(no Python frame of the program)"
		if len(frames) > 0 {
			where = frames[0]
		}
		key := where + "\x00" + a.Op + "\x00" + cats[i].String()
		s := by[key]
		if s == nil {
			s = &TraceSite{Where: where, Op: a.Op, Module: modulePattern(a.Module), Category: cats[i].String(), Frames: frames}
			by[key] = s
		} else {
			s.Module = mergeModules(s.Module, modulePattern(a.Module))
		}
		s.Bytes += b.size
		s.Count++
	}
	out := make([]TraceSite, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Where+out[i].Op < out[j].Where+out[j].Op
	})
	if len(out) > maxTraceSites {
		out = out[:maxTraceSites]
	}
	return out
}

// TraceCategorySizes lists every allocation of the trace as
// "category:bytes" (for comparing two traces of one script).
func TraceCategorySizes(t *Trace) []string {
	cats := t.categories()
	out := make([]string, len(t.Allocs))
	for i, a := range t.Allocs {
		out[i] = fmt.Sprintf("%s:%d", cats[i], a.Bytes)
	}
	return out
}

// allocConf: the options the replay followed, as written
// (expandable: the replay's, a lever's what-if perhaps; the fraction: the
// program's own when it set one).
func (t *Trace) allocConf(a *allocator) allocconf.Conf {
	c := t.Alloc
	c.Expandable, c.MaxSplit = a.expandable, a.maxSplit
	c.Fraction, _ = t.MemoryFraction()
	return c
}
