package estimate

// machine runs the allocation program the model walk emits: each tensor is
// allocated through the caching-allocator replay, and freed when neither
// the program (live) nor autograd (saved) holds it any more — the rule by
// which PyTorch's reference counting frees CUDA memory.

// Category names what a tensor is for, in the breakdown.
type Category int

// The breakdown's categories.
const (
	CatWeights Category = iota
	CatGrads
	CatOptState
	CatOptTemp
	CatActivations
	CatAutocast
	CatLoss
	CatKVCache
	CatWorkspace
	CatData
	CatAdapters    // LoRA weights and modules_to_save copies (peft.go)
	CatQuantConsts // quantization scales, zeros and absmax (quant.go)
	CatDequant     // weights dequantized for one GEMM (quant.go)
	CatTemporaries // --trace: what an op makes and frees before the backward (trace.go)
	CatUnusedGraph // --trace: what autograd saved for a backward that never came (trace_replay.go)
	CatLoaded      // --trace: what torch.load made on the GPU, still no parameter or state (trace_levers.go)
	numCats
)

var catNames = [numCats]string{"weights", "gradients", "optimizer_states", "optimizer_temporaries",
	"activations", "autocast_weight_copies", "logits_and_loss", "kv_cache", "cublas_workspace", "input_data",
	"adapter_weights", "quantization_constants", "dequantized_weight_temporaries", "temporaries", "unused_graph", "torch_load"}

func (c Category) String() string { return catNames[c] }

type tensor struct {
	elems       int64
	dt          int64 // bytes per element
	cat         Category
	live, saved bool
	// holds counts the autograd nodes that keep t when more than one may:
	// a tensor goes when the last of them has run.
	holds int
	blk   *block
	// bwdWorkspace: bytes the backward of the op that saved t takes from
	// the allocator for the call (attention.go's kernels' accumulators).
	bwdWorkspace int64
	// bwdGrads: bytes of gradients the backward of the op that saved t
	// makes next to the one the walk counts (llama.go's gated MLP).
	bwdGrads int64
}

type machine struct {
	alloc     allocator
	cur       [numCats]int64
	total     int64
	peak      int64
	peakCats  [numCats]int64
	peakPhase string
	phase     string
	// grad: autograd records saved tensors (training, outside no_grad).
	grad bool
	cat  Category
	// stream: the CUDA stream new tensors are made on (a trace's; the
	// built-in walk's are all on the default one, 0).
	stream int32
}

func (m *machine) new(elems, dt int64, c Category) *tensor {
	t := &tensor{elems: elems, dt: dt, cat: c, live: true}
	t.blk = m.alloc.mallocOn(elems*dt, m.stream)
	m.cur[c] += t.blk.size
	m.total += t.blk.size
	if m.total > m.peak {
		m.peak, m.peakCats, m.peakPhase = m.total, m.cur, m.phase
	}
	return t
}

// resetPeaks: the peaks from now on, as torch.cuda.reset_peak_memory_stats()
// makes them (an out-of-memory error the program caught is behind it).
func (m *machine) resetPeaks() {
	m.peak, m.peakCats, m.peakPhase = m.total, m.cur, m.phase
	m.alloc.peak, m.alloc.oom = m.alloc.reserved, false
}

// newOn is new on stream s (FSDP's own streams in the built-in walk).
func (m *machine) newOn(s int32, elems, dt int64, c Category) *tensor {
	prev := m.stream
	m.stream = s
	defer func() { m.stream = prev }()
	return m.new(elems, dt, c)
}

func (m *machine) maybeFree(t *tensor) {
	if t == nil || t.live || t.saved || t.holds > 0 || t.blk == nil {
		return
	}
	m.cur[t.cat] -= t.blk.size
	m.total -= t.blk.size
	m.alloc.release(t.blk)
	t.blk = nil
}

// save marks t as kept by autograd for the backward pass (no-op without grad).
func (m *machine) save(ts ...*tensor) {
	if !m.grad {
		return
	}
	for _, t := range ts {
		if t != nil {
			t.saved = true
		}
	}
}

// drop says the program holds t no more.
func (m *machine) drop(ts ...*tensor) {
	for _, t := range ts {
		if t != nil {
			t.live = false
			m.maybeFree(t)
		}
	}
}

// unsave releases autograd's hold (after the tensor's backward ran).
func (m *machine) unsave(ts ...*tensor) {
	for _, t := range ts {
		if t != nil {
			t.saved = false
			m.maybeFree(t)
		}
	}
}

// hold adds one autograd node keeping t for the backward pass (no-op
// without grad), counted so that t lives until the last of them has run.
func (m *machine) hold(t *tensor) {
	if m.grad && t != nil {
		t.holds++
	}
}

// release is one of t's holders having run its backward.
func (m *machine) release(t *tensor) {
	if t != nil && t.holds > 0 {
		t.holds--
		m.maybeFree(t)
	}
}
