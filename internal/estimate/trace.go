package estimate

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/allocconf"
)

// A trace is what torchmem_hook/_trace.py records while the user's own
// script runs with its GPU redirected to the meta device (torchmem
// estimate --trace): every storage the GPU would allocate and free, in
// order, with its size, what it is for, the phase, the module, the op and
// the program's stack. One event a line, tab-separated (the Python
// module's docstring is the format's definition).

// TraceMagic starts a trace's header line.
const TraceMagic = "torchmem-trace"

// Bounds on what a trace may hold, so a damaged or hostile file cannot
// take the process's memory: a line, the frames of a stack; and on the
// bytes one allocation or item may have (a PiB: no GPU holds one, and sums
// of them stay far from overflowing).
const (
	maxTraceLine   = 1 << 20
	maxTraceFrames = 64
	maxTraceBytes  = 1 << 50
	// the hook writes at most 20 notes of each of its kinds
	maxTraceWarnings = 512
	// streams a trace may name: the hook's are the default one and
	// torch's pools of 32 per priority (each new torch.cuda.Stream() the
	// next of its pool's, round robin)
	maxTraceStreams = 1024
)

// TraceAlloc is one storage the traced program allocated on the GPU.
type TraceAlloc struct {
	ID    int64
	Bytes int64
	// Kind as recorded when made (fwd, bwd, data, opttemp, other), then
	// as learnt later (param, param4, buffer, grad, optstate, autocast).
	Kind   string
	Phase  string
	Step   int
	Stack  int
	Module string
	Op     string
	DType  string
	Shape  string
	// Unused: autograd saved it for a backward that never came (U
	// event): a forward under grad mode whose graph was dropped unused.
	Unused bool
	// Stream: the CUDA stream it was made on (T events; 0: the default
	// one). The allocator caches each stream's blocks for that stream.
	Stream int32
}

// TraceNote is a warning (a value read from a tensor without data) or
// the end of the trace: the reason, the op and where.
type TraceNote struct {
	Kind    string   `json:"kind"`
	Op      string   `json:"op,omitempty"`
	Where   []string `json:"where,omitempty"`
	Message string   `json:"message"`
	// Rule: what sized a datashape note's op (Shape*); empty otherwise.
	Rule string `json:"rule,omitempty"`
}

// gpuCountRefusals: what a program or its framework says when
// torch.cuda.device_count() gives it fewer GPUs than it asks for
// (Lightning's and Fabric's device parser: "You requested gpu: [0, 1, 2,
// 3] But your machine only has: [0]"), lower case.
var gpuCountRefusals = []string{"your machine only has"}

// WantsMoreGPUs: the trace ended on the program refusing the number of GPUs
// it was given (under --trace, torch.cuda.device_count() answers
// --world-size, 1 unless given, where no launcher says).
func (n *TraceNote) WantsMoreGPUs() bool {
	if n == nil || n.Kind != "error" {
		return false
	}
	m := strings.ToLower(n.Message)
	for _, r := range gpuCountRefusals {
		if strings.Contains(m, r) {
			return true
		}
	}
	return false
}

// The rules by which the tracer sized what depends on the data (its
// "datashape" notes; _trace_masks.py names each note's rule, the W
// line's sixth field).
const (
	// ShapeRouter: a router's masks, counts and top-k indices, each expert
	// a balanced share of the tokens.
	ShapeRouter = "router"
	// ShapeKnown: a selection from values the tracer knows, each of them.
	ShapeKnown = "known"
	// ShapeMost: any other mask all its elements, every box kept, every
	// element distinct: the most each can be.
	ShapeMost = "most"
	// ShapeMinLength: bincount's values below its minlength (a confusion
	// matrix's n*target+prediction over n*n): its output that long.
	ShapeMinLength = "minlength"
	// ShapeSampled: a sampler's mask (zeros, then 1 put at the sampled
	// indices) as many true elements as indices were put, at most.
	ShapeSampled = "sampled"
)

// NoteCounts: the notes of each kind the trace made, its W events' or
// the tracer's count at the end when larger (it says each site once, at
// most 20 a kind).
func (t *Trace) NoteCounts() map[string]int {
	out := map[string]int{}
	for _, w := range t.Warnings {
		out[w.Kind]++
	}
	for k, n := range t.noteCounts {
		out[k] = max(out[k], n)
	}
	return out
}

// ShapeRule: which rule sized a datashape note's op; a note that names
// none was sized as the most it can be.
func (n *TraceNote) ShapeRule() string {
	if n.Rule == "" {
		return ShapeMost
	}
	return n.Rule
}

// TraceDist is what a trace of distributed training says of it: the
// trace is of rank 0, in a world of World ranks (every rank of a
// data-parallel job holds what rank 0 does), the process group's backend
// as the program asked for it, the launcher the trace replaced by its
// rank 0 worker ("torchrun 8") and the wrappers the model went through.
type TraceDist struct {
	World    int      `json:"world_size"`
	Backend  string   `json:"backend,omitempty"`
	Launcher string   `json:"launcher,omitempty"`
	Wrappers []string `json:"wrappers,omitempty"`
	// RankAsked: the rank the program asked for, when not 0 (traced as 0).
	RankAsked string `json:"rank_asked,omitempty"`
	// HostParams: with FSDP's CPU offload, the parameters of rank 0's
	// shards, which stay on the host (none of them is a GPU allocation).
	HostParams int64 `json:"host_params,omitempty"`
}

// nccl: the program's process group communicates through NCCL on the
// GPU: asked for by name ("nccl", "cuda:nccl,cpu:gloo"), or no backend
// named ("default"), which is NCCL for CUDA tensors.
func (d *TraceDist) nccl() bool {
	if d == nil {
		return false
	}
	b := strings.ToLower(d.Backend)
	return b == "default" || strings.Contains(b, "nccl")
}

// Sharded: the parameters were sharded over the world (FSDP2's
// fully_shard, FSDP1's FullyShardedDataParallel but for its NO_SHARD,
// which the hook names so, DeepSpeed's ZeRO-3), so the trace's parameters
// are rank 0's share.
func (d *TraceDist) Sharded() bool {
	if d == nil || d.World < 2 {
		return false
	}
	for _, w := range d.Wrappers {
		if w == "fully_shard" || w == "FullyShardedDataParallel" || w == "DeepSpeed ZeRO-3" {
			return true
		}
	}
	return false
}

// maxTraceWrappers bounds the wrappers a trace may list.
const maxTraceWrappers = 16

type traceEv struct {
	free  bool
	alloc int32 // index into Trace.Allocs
}

// Trace is a parsed trace.
type Trace struct {
	Header map[string]string
	Stacks map[int][]string
	Allocs []TraceAlloc
	events []traceEv
	phases []tracePhase // phase changes, at an event index
	// noteCounts: the notes of a kind, where more than its W events
	// (the tracer says each site once, and at most 20 a kind)
	noteCounts map[string]int
	// emptied: the program's torch.cuda.empty_cache() calls, at an event
	// index (the replay gives the cached segments back there).
	emptied  []int
	Warnings []TraceNote
	End      *TraceNote
	// Dist: nil unless the program made a process group or a launcher ran it.
	Dist *TraceDist
	// returned: the allocations a numbered module (model.layers.3)
	// returned from its forward (O events), by the outermost such module
	// (the last one said).
	returned map[int32]string
	// Pending: optimizer states the steps did not make (a Q event), nil
	// when none.
	Pending *StatesNotMade
	// gradElems: the parameter elements a sparse gradient's allocation
	// stands for (G events: its values the parameter's, its indices
	// none), where its bytes say how many rows the batch touched.
	gradElems map[int32]int64
	// lastUse: the event after which a block's forward used an
	// allocation last (L events).
	lastUse map[int32]int
	// inputs: what the outermost numbered modules were given (I events),
	// in order, each at the event that came next.
	inputs []blockInput
	// outside: GPU memory the caching allocator does not hold (M events),
	// by breakdown item, in the order first seen.
	outside []Item
	// Alloc: the options of PyTorch's allocator the job runs with
	// (PYTORCH_CUDA_ALLOC_CONF as its environment has them: the caller
	// sets them; the replay follows them).
	Alloc allocconf.Conf
	// fraction: what the program's own last
	// torch.cuda.set_per_process_memory_fraction asked (K events; 0:
	// none), which overrides Alloc's.
	fraction float64
	// stream: the stream the allocations are made on from here (the last
	// T event's), while parsing.
	stream int32
}

// MemoryFraction is the share of the GPU the job caps PyTorch's
// allocator at (0: none), and whether the program set it itself
// (torch.cuda.set_per_process_memory_fraction) rather than its
// environment (per_process_memory_fraction, torch >= 2.8).
func (t *Trace) MemoryFraction() (fraction float64, byProgram bool) {
	if t.fraction > 0 {
		return t.fraction, true
	}
	return t.Alloc.Fraction, false
}

// traceOutside: what M events may name (each a breakdown item the report
// knows how to say).
var traceOutside = map[string]bool{"paged_optimizer_states": true}

// blockInput is a storage given to a block's forward, before event at.
type blockInput struct {
	alloc int32
	block string
	at    int
}

type tracePhase struct {
	at    int
	phase string
	step  int
}

// Events is the number of allocations and frees.
func (t *Trace) Events() int { return len(t.events) }

// ParseTrace reads a trace. Errors name the line.
func ParseTrace(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxTraceLine)
	t := &Trace{Header: map[string]string{}, Stacks: map[int][]string{}}
	index := map[int64]int32{}
	live := map[int32]bool{}
	n := 0
	var buf []string
	for sc.Scan() {
		n++
		buf = splitTabs(sc.Text(), buf[:0])
		f := buf
		if n == 1 {
			if f[0] != TraceMagic || len(f) < 2 || f[1] != "1" {
				return nil, fmt.Errorf("line 1: not a torchmem trace (version 1)")
			}
			for _, kv := range f[2:] {
				k, v, _ := strings.Cut(kv, "=")
				t.Header[k] = v
			}
			continue
		}
		if err := t.parseLine(f, index, live); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("empty trace: the program never imported torch, or the trace file was not written")
	}
	return t, nil
}

// splitTabs is strings.Split(s, "\t") into a reused slice.
func splitTabs(s string, out []string) []string {
	for {
		i := strings.IndexByte(s, '\t')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}

// traceFields: the fields each event has at least.
var traceFields = map[string]int{"U": 2, "K": 3, "S": 2, "A": 11, "F": 2, "C": 3, "P": 3, "W": 5, "N": 3, "E": 5, "D": 3, "R": 1, "M": 3, "O": 3, "L": 3, "I": 3, "T": 2, "G": 3, "Q": 3}

func (t *Trace) parseLine(f []string, index map[int64]int32, live map[int32]bool) error {
	min, ok := traceFields[f[0]]
	if !ok {
		return fmt.Errorf("unknown event %q", f[0])
	}
	if len(f) < min {
		return fmt.Errorf("event %s: %d fields, want %d", f[0], len(f), min)
	}
	switch f[0] {
	case "S":
		id, err := strconv.Atoi(f[1])
		if err != nil || len(f)-2 > maxTraceFrames {
			return fmt.Errorf("stack %q: bad id or too many frames", f[1])
		}
		t.Stacks[id] = append([]string(nil), f[2:]...)
	case "A":
		a, err := parseAlloc(f)
		if err != nil {
			return err
		}
		if _, dup := index[a.ID]; dup {
			return fmt.Errorf("allocation %d made twice", a.ID)
		}
		a.Stream = t.stream
		i := int32(len(t.Allocs))
		index[a.ID] = i
		live[i] = true
		t.Allocs = append(t.Allocs, a)
		t.events = append(t.events, traceEv{alloc: i})
	case "F":
		i, err := lookup(f[1], index)
		if err != nil {
			return err
		}
		if !live[i] {
			return fmt.Errorf("allocation %s freed twice", f[1])
		}
		delete(live, i)
		t.events = append(t.events, traceEv{free: true, alloc: i})
	case "C":
		i, err := lookup(f[1], index)
		if err != nil {
			return err
		}
		t.Allocs[i].Kind = f[2]
	case "U":
		i, err := lookup(f[1], index)
		if err != nil {
			return err
		}
		t.Allocs[i].Unused = true
	case "P":
		step, err := strconv.Atoi(f[2])
		if err != nil {
			return fmt.Errorf("phase step %q", f[2])
		}
		t.phases = append(t.phases, tracePhase{at: len(t.events), phase: f[1], step: step})
	case "Q":
		b, err1 := strconv.ParseInt(f[1], 10, 64)
		n, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || b < 0 || b > maxTraceBytes || n < 0 {
			return fmt.Errorf("states not made %q %q", f[1], f[2])
		}
		t.Pending = &StatesNotMade{Bytes: b, Params: n}
	case "G":
		i, err := lookup(f[1], index)
		if err != nil {
			return err
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("gradient elements %q", f[2])
		}
		if t.gradElems == nil {
			t.gradElems = map[int32]int64{}
		}
		t.gradElems[i] = n
	case "O":
		i, err := lookup(f[1], index)
		if err != nil {
			return err
		}
		if t.returned == nil {
			t.returned = map[int32]string{}
		}
		t.returned[i] = f[2]
	case "I":
		i, err := lookup(f[1], index)
		if err != nil {
			return err
		}
		t.inputs = append(t.inputs, blockInput{alloc: i, block: f[2], at: len(t.events)})
	case "L":
		i, err := lookup(f[1], index)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 1 || n > len(t.events) {
			return fmt.Errorf("last use of %s: %q is not an event so far", f[1], f[2])
		}
		if t.lastUse == nil {
			t.lastUse = map[int32]int{}
		}
		t.lastUse[i] = n - 1
	case "T":
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 || n >= maxTraceStreams {
			return fmt.Errorf("stream %q: not a stream number under %d", f[1], maxTraceStreams)
		}
		t.stream = int32(n)
	case "D":
		return t.parseDist(f[1], f[2])
	case "M":
		return t.parseOutside(f[1], f[2])
	case "K":
		return t.parseAllocSetting(f[1], f[2])
	case "R":
		// (calls with no event between are one: at most one per event)
		if n := len(t.emptied); n == 0 || t.emptied[n-1] != len(t.events) {
			t.emptied = append(t.emptied, len(t.events))
		}
	case "N":
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 {
			return fmt.Errorf("note count %q", f[2])
		}
		if t.noteCounts == nil {
			t.noteCounts = map[string]int{}
		}
		t.noteCounts[f[1]] = n
	case "W", "E":
		sid, _ := strconv.Atoi(f[3])
		note := TraceNote{Kind: f[1], Op: f[2], Where: t.Stacks[sid], Message: f[4]}
		if len(f) > 5 {
			note.Rule = f[5]
		}
		if f[0] == "W" {
			if len(t.Warnings) < maxTraceWarnings {
				t.Warnings = append(t.Warnings, note)
			}
		} else {
			t.End = &note
		}
	}
	return nil
}

// parseAllocSetting reads a K event: an allocator setting the program
// made (memory_fraction: torch.cuda.set_per_process_memory_fraction).
func (t *Trace) parseAllocSetting(key, value string) error {
	if key != "memory_fraction" {
		return fmt.Errorf("allocator setting: unknown %q", key)
	}
	f, err := strconv.ParseFloat(value, 64)
	if err != nil || !(f > 0 && f <= 1) {
		return fmt.Errorf("allocator setting: memory_fraction %q is not in (0, 1]", value)
	}
	t.fraction = f
	return nil
}

// parseOutside adds an M event's bytes to its item.
func (t *Trace) parseOutside(bytes, what string) error {
	n, err := strconv.ParseInt(bytes, 10, 64)
	if err != nil || n < 0 || n > maxTraceBytes {
		return fmt.Errorf("memory outside the allocator: bytes %q", bytes)
	}
	if !traceOutside[what] {
		return fmt.Errorf("memory outside the allocator: unknown kind %q", what)
	}
	for i := range t.outside {
		if t.outside[i].Name == what {
			t.outside[i].Bytes = min(t.outside[i].Bytes+n, maxTraceBytes)
			return nil
		}
	}
	t.outside = append(t.outside, Item{what, n})
	return nil
}

func (t *Trace) parseDist(key, v string) error {
	if t.Dist == nil {
		t.Dist = &TraceDist{World: 1}
	}
	d := t.Dist
	switch key {
	case "world":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1<<20 {
			return fmt.Errorf("world size %q", v)
		}
		d.World = n
	case "backend":
		d.Backend = v
	case "launcher": // "torchrun 8": its world, until the program makes one
		d.Launcher = v
		if _, n, ok := strings.Cut(v, " "); ok && d.Backend == "" {
			if w, err := strconv.Atoi(n); err == nil && w >= 1 && w <= 1<<20 {
				d.World = w
			}
		}
	case "rank":
		d.RankAsked = v
	case "wrapper":
		if len(d.Wrappers) < maxTraceWrappers {
			d.Wrappers = append(d.Wrappers, v)
		}
	case "host_params": // the total so far: each offloaded unit adds its shards
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > 1<<50 {
			return fmt.Errorf("host parameters %q", v)
		}
		d.HostParams = n
	}
	return nil
}

func lookup(s string, index map[int64]int32) (int32, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("allocation id %q", s)
	}
	i, ok := index[id]
	if !ok {
		return 0, fmt.Errorf("allocation %d not made", id)
	}
	return i, nil
}

func parseAlloc(f []string) (TraceAlloc, error) {
	id, err1 := strconv.ParseInt(f[1], 10, 64)
	b, err2 := strconv.ParseInt(f[2], 10, 64)
	step, err3 := strconv.Atoi(f[5])
	sid, err4 := strconv.Atoi(f[6])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || b < 0 || b > maxTraceBytes {
		return TraceAlloc{}, fmt.Errorf("allocation %q: bad id, size, step or stack", f[1])
	}
	return TraceAlloc{ID: id, Bytes: b, Kind: f[3], Phase: f[4], Step: step, Stack: sid,
		Module: f[7], Op: f[8], DType: f[9], Shape: f[10]}, nil
}
