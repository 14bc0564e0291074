package estimate

import (
	"fmt"
	"strings"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// QuantOptions are quantized weights and the KV cache's element type.
//
//   - int8: bitsandbytes LLM.int8 (Linear8bitLt, has_fp16_weights=False):
//     an int8 weight and one fp32 scale per output row (SCB).
//   - nf4, fp4: bitsandbytes Linear4bit (Params4bit): two weights per
//     byte and one fp32 absmax per block of 64; with double quantization
//     (bnb_4bit_use_double_quant) the absmax are themselves 8-bit, with
//     one fp32 constant per 256 of them.
//   - gptq: a packed int32 qweight (eight 4-bit weights each), qzeros
//     (packed the same way) and fp16 scales per group of GroupSize input
//     rows, and g_idx (int32 per input row).
//   - awq: AutoAWQ's GEMM layout: qweight, qzeros and scales as GPTQ's,
//     without g_idx.
//   - fp8: one byte a weight (float8_e4m3), an fp32 scale per output row,
//     or per GroupSize×GroupSize block when a group size is given (the
//     block-wise layout of DeepSeek-style fp8 checkpoints).
//
// Only the transformer blocks' linear layers are quantized: embeddings,
// norms and the output layer stay in the model's dtype (transformers'
// get_keys_to_not_convert keeps lm_head; GPTQ and AWQ quantize the
// decoder layers only).
type QuantOptions struct {
	Method    string `json:"method,omitempty"`
	Double    bool   `json:"double_quant,omitempty"`
	GroupSize int    `json:"group_size,omitempty"`
	// ComputeDType is bnb_4bit_compute_dtype: the dtype a 4-bit weight is
	// dequantized to for each GEMM (bf16, fp16 or fp32); default bf16
	// (fp16 with an fp16 precision).
	ComputeDType string `json:"compute_dtype,omitempty"`
	// KVDType is the KV cache's element type: bf16, fp16, fp32 or fp8;
	// empty for the model's compute dtype.
	KVDType string `json:"kv_dtype,omitempty"`
	// SavesInput is bitsandbytes before 0.43.2 (July 2024): MatMul4Bit
	// kept its compute-dtype input for backward (ctx.tensors = (A, B),
	// 0.43.1 bitsandbytes/autograd/_functions.py) although a frozen 4-bit
	// weight needs no gradient; bitsandbytes PR #1270 made it (None, B).
	SavesInput bool `json:"bnb_saves_input,omitempty"`
}

var quantMethods = []string{"int8", "nf4", "fp4", "gptq", "awq", "fp8"}

// Quantization constants of the kernels modelled.
const (
	bnb4BlockSize = 64  // bitsandbytes 4-bit quantization block (blocksize=64)
	bnbDQBlock    = 256 // double quantization: absmax values per second-level block
	// gptqDefaultGroup is the group size of most published GPTQ and AWQ
	// checkpoints (quantize_config.json "group_size": 128).
	gptqDefaultGroup = 128
	// awqDequantRows: AutoAWQ's WQLinear_GEMM dequantizes the whole weight
	// to fp16 and runs torch.matmul when batch × tokens ≥ 1024
	// (FP16_MATMUL_HEURISTIC_CONDITION); below, its fused kernel reads the
	// packed weight directly.
	awqDequantRows = 1024
	// gptqScratchRows: ExLlamaV2's kernel reconstructs a layer's fp16
	// weight into a scratch buffer when a GEMM has more rows than
	// MAX_Q_GEMM_ROWS (50); the buffer (temp_dq, the size of the largest
	// layer) is allocated once when the model is prepared.
	gptqScratchRows = 50
)

func (q QuantOptions) check(o *Options) error {
	switch {
	case q.Method != "" && !oneOf(q.Method, quantMethods):
		return fmt.Errorf("--quant %q: want one of %s", q.Method, strings.Join(quantMethods, ", "))
	case q.Double && q.Method != "nf4" && q.Method != "fp4":
		return fmt.Errorf("--quant-double is bitsandbytes 4-bit double quantization: it needs --quant nf4 or fp4")
	case q.GroupSize != 0 && q.Method != "gptq" && q.Method != "awq" && q.Method != "fp8":
		return fmt.Errorf("--quant-group-size applies to --quant gptq, awq or fp8")
	case q.GroupSize < -1 || q.GroupSize > 1<<16:
		return fmt.Errorf("--quant-group-size %d out of range", q.GroupSize)
	case q.GroupSize == -1 && q.Method != "gptq":
		return fmt.Errorf("--quant-group-size -1 (one group per column) is GPTQ's; AWQ and fp8 need a positive size")
	case q.ComputeDType != "" && !oneOf(q.ComputeDType, []string{"bf16", "fp16", "fp32"}):
		return fmt.Errorf("--quant-compute-dtype %q: want bf16, fp16 or fp32", q.ComputeDType)
	case q.SavesInput && q.Method != "nf4" && q.Method != "fp4":
		return fmt.Errorf("--bnb-saves-input is bitsandbytes 4-bit's (before 0.43.2): it needs --quant nf4 or fp4")
	case q.ComputeDType != "" && q.Method != "nf4" && q.Method != "fp4":
		return fmt.Errorf("--quant-compute-dtype is bitsandbytes 4-bit's: it needs --quant nf4 or fp4")
	case q.KVDType != "" && !oneOf(q.KVDType, []string{"bf16", "fp16", "fp32", "fp8"}):
		return fmt.Errorf("--kv-dtype %q: want bf16, fp16, fp32 or fp8", q.KVDType)
	case q.KVDType != "" && !o.KVCache && o.GenLen == 0:
		return fmt.Errorf("--kv-dtype needs --kv-cache or --gen-len")
	case q.Method != "" && !o.Inference && o.PEFT.Method == "":
		return fmt.Errorf("--quant %s: a quantized model cannot be trained as a whole (transformers refuses it); add --peft qlora, or --inference", q.Method)
	case !o.Inference && q.Method != "" && q.Method != "int8" && q.Method != "nf4" && q.Method != "fp4":
		return fmt.Errorf("--quant %s with --peft: QLoRA is modelled on bitsandbytes weights (int8, nf4, fp4)", q.Method)
	}
	return nil
}

// group is the quantization group size of a GPTQ/AWQ/fp8 layout.
func (q QuantOptions) group() int64 {
	if q.GroupSize == 0 {
		return gptqDefaultGroup
	}
	return int64(q.GroupSize)
}

// qpart is one tensor of a quantized weight: its element count and size.
type qpart struct {
	elems, dt int64
	consts    bool // scales, zeros, absmax: quantization constants
}

// quantParts are the tensors an in×out linear weight becomes.
func (q QuantOptions) quantParts(in, out int64) []qpart {
	n := in * out
	ceil := func(a, b int64) int64 { return (a + b - 1) / b }
	switch q.Method {
	case "int8":
		return []qpart{{n, 1, false}, {out, 4, true}} // CB, SCB
	case "nf4", "fp4":
		blocks := ceil(n, bnb4BlockSize)
		parts := []qpart{{ceil(n, 2), 1, false}}
		if q.Double {
			// 8-bit absmax, fp32 absmax of each 256, and the offset (their mean).
			return append(parts, qpart{blocks, 1, true}, qpart{ceil(blocks, bnbDQBlock), 4, true}, qpart{1, 4, true})
		}
		return append(parts, qpart{blocks, 4, true})
	case "gptq", "awq":
		g := q.group()
		groups := int64(1)
		if g > 0 {
			groups = ceil(in, g)
		}
		parts := []qpart{
			{ceil(in, 8) * out, 4, false},    // qweight: int32, 8 nibbles each
			{groups * ceil(out, 8), 4, true}, // qzeros
			{groups * out, 2, true},          // scales (fp16)
		}
		if q.Method == "gptq" {
			parts = append(parts, qpart{in, 4, true}) // g_idx
		}
		return parts
	case "fp8":
		if q.GroupSize > 0 {
			g := int64(q.GroupSize)
			return []qpart{{n, 1, false}, {ceil(in, g) * ceil(out, g), 4, true}}
		}
		return []qpart{{n, 1, false}, {out, 4, true}}
	}
	return nil
}

// bnb: bitsandbytes weights (their layers cast the input to the compute
// dtype and the output back to the input's dtype).
func (q QuantOptions) bnb() bool {
	return q.Method == "int8" || q.Method == "nf4" || q.Method == "fp4"
}

// computeDT is the element size a 4-bit weight is dequantized to.
func (q QuantOptions) computeDT(precision string) int64 {
	switch q.ComputeDType {
	case "fp32":
		return 4
	case "bf16", "fp16":
		return 2
	}
	if precision == "fp32" {
		return 4 // bnb_4bit_compute_dtype defaults to fp32; a bf16 recipe sets it
	}
	return 2
}

// kvDT is the element size of a KV-cache tensor made from one of dt.
func (e *ctx) kvDT(dt int64) int64 {
	switch e.o.Quant.KVDType {
	case "fp8":
		return 1
	case "bf16", "fp16":
		return 2
	case "fp32":
		return 4
	}
	return dt
}

// quantLinear runs x through a quantized in×out weight: the temporaries
// each kernel makes, and an output of outElems. The weight is frozen, so
// nothing is saved for its gradient; what bitsandbytes' autograd
// functions keep of the input, keepNodeInput says (MatMul8bitLt: A;
// MatMul4Bit: nothing since 0.43.2, ctx.tensors = (None, B)).
func (e *ctx) quantLinear(x *tensor, li *linInfo, outElems int64) *tensor {
	q := e.o.Quant
	rows := outElems / li.out
	cdt := e.pq.computeDT
	outDT := cdt
	switch q.Method {
	case "nf4", "fp4":
		in := x
		if x.dt != cdt { // x = x.to(self.compute_dtype)
			in = e.act(x.elems, cdt)
		}
		e.keepNodeInput(in, e.o.Quant.SavesInput)
		if rows > 1 || e.m.grad {
			// matmul_4bit: F.linear(A, dequantize_4bit(B).to(A.dtype).t());
			// a single token without grad takes the gemv kernel instead.
			w := e.m.new(li.in*li.out, cdt, CatDequant)
			o := e.act(outElems, cdt)
			e.m.drop(w)
			return e.bnbOut(x, in, o)
		}
		return e.bnbOut(x, in, e.act(outElems, cdt))
	case "int8":
		// MatMul8bitLt: int8 rows of x with their fp32 scales, an int32
		// product, then the dequantized fp16 output. Unlike MatMul4Bit it
		// keeps its input for backward whenever the input needs a
		// gradient (ctx.tensors = (CAt, subA, A)), with the node.
		e.keepNodeInput(x, true)
		in := x
		if x.dt != 2 {
			in = e.act(x.elems, 2)
		}
		ca := e.act(x.elems, 1)
		st := e.act(rows, 4)
		acc := e.act(outElems, 4)
		o := e.act(outElems, 2)
		e.m.drop(acc, ca, st)
		return e.bnbOut(x, in, o)
	case "awq":
		if rows >= awqDequantRows {
			w := e.m.new(li.in*li.out, 2, CatDequant)
			o := e.act(outElems, 2)
			e.m.drop(w)
			return o
		}
		return e.act(outElems, 2)
	case "gptq":
		return e.act(outElems, 2) // the scratch buffer is allocated at load
	case "fp8":
		// torch._scaled_mm takes fp8 operands: x is quantized per token first.
		xq := e.act(x.elems, 1)
		sc := e.act(rows, 4)
		o := e.act(outElems, outDT)
		e.m.drop(xq, sc)
		return o
	}
	return e.act(outElems, outDT)
}

// bnbOut: bitsandbytes casts the output back to the input's dtype
// (.to(inp_dtype)) and lets go of the cast input.
// keepNodeInput is a bitsandbytes autograd Function keeping its input A
// in ctx.tensors when keeps: MatMul8bitLt always, MatMul4Bit before
// 0.43.2 (SavesInput). That is an attribute of the autograd node, not
// save_for_backward, so the engine does not free it when the node has
// run: it lives as long as the node. Under reentrant checkpointing the
// node belongs to the block's recomputed graph, which CheckpointFunction.
// backward holds (its outputs) until the block's backward returns;
// without checkpointing it belongs to the step's graph, held until the
// backward ends; non-reentrant checkpointing's forward creates the node
// with grad enabled, so the forward's A is kept to the end of the
// backward too. Under no_grad (reentrant checkpointing's forward) the
// input needs no gradient and nothing is kept.
func (e *ctx) keepNodeInput(in *tensor, keeps bool) {
	if !keeps || e.o.Inference || e.pq == nil {
		return
	}
	nonReentrant := e.o.Checkpointing && e.o.PEFT.NonReentrant
	switch {
	case e.m.grad && e.o.Checkpointing:
		e.pq.keptBlock = append(e.pq.keptBlock, in)
	case e.m.grad || nonReentrant:
		e.pq.keptStep = append(e.pq.keptStep, in)
	default:
		return
	}
	in.holds++
	if e.m.grad {
		in.saved = true // its backward makes the input's gradient (fp16, then the cast back)
	}
}

// releaseNodeInputs lets go of what keepNodeInput kept: at the end of a
// block's backward (step false) or of the whole backward (step true).
func (e *ctx) releaseNodeInputs(step bool) {
	if e.pq == nil {
		return
	}
	l := &e.pq.keptBlock
	if step {
		l = &e.pq.keptStep
	}
	for _, t := range *l {
		t.saved = false
		e.m.release(t)
	}
	*l = nil
}

func (e *ctx) bnbOut(x, in, o *tensor) *tensor {
	if in != x {
		e.m.drop(in)
	}
	if o.dt != x.dt {
		c := e.act(o.elems, x.dt)
		e.m.drop(o)
		return c
	}
	return o
}

// quantBackwardTemp: the backward of a frozen bitsandbytes linear
// dequantizes the weight again for the input's gradient (MatMul4Bit:
// dequantize_4bit(B).to(grad.dtype); MatMul8bitLt: CB.to(dtype) scaled),
// between the casts its layer made in forward, now run backwards: the
// output's gradient cast to the compute dtype, the input's gradient
// made in it and cast back to the input's dtype (fp32 after
// prepare_model_for_kbit_training). Layers run one at a time: the
// block's largest is the peak.
func (e *ctx) quantBackwardTemp(block int) {
	if !e.o.Quant.bnb() || block < 0 || block+1 >= len(e.pq.linears) {
		return
	}
	var big *linInfo
	for _, li := range e.pq.linears[block+1] {
		if li.quant && (big == nil || li.in*li.out+e.tokens()*(li.in+li.out) > big.in*big.out+e.tokens()*(big.in+big.out)) {
			big = li
		}
	}
	if big == nil {
		return
	}
	cdt, xdt, rows := e.pq.computeDT, e.dt.compute, e.tokens()
	var ts []*tensor
	if xdt != cdt {
		ts = append(ts, e.m.new(rows*big.out, cdt, CatActivations))
	}
	ts = append(ts, e.m.new(big.in*big.out, cdt, CatDequant), e.m.new(rows*big.in, cdt, CatActivations))
	if xdt != cdt {
		ts = append(ts, e.m.new(rows*big.in, xdt, CatActivations))
	}
	e.m.drop(ts...)
}

// gptqScratch is ExLlamaV2's temp_dq buffer, made when the model is
// prepared: the largest quantized layer in fp16, kept for the process.
func (e *ctx) gptqScratch() {
	if e.o.Quant.Method != "gptq" || e.o.Batch*max(e.seq(), 1) <= gptqScratchRows && e.o.GenLen == 0 {
		return
	}
	var big int64
	for _, l := range e.pq.linears {
		for _, li := range l {
			if li.quant {
				big = max(big, li.in*li.out)
			}
		}
	}
	if big > 0 {
		e.m.new(big, 2, CatDequant)
	}
}

// WeightBytes is what md's parameters take on the GPU with o's
// precision and quantization, before any step runs: weights (packed
// quantized tensors and the parameters left in their dtype) and the
// quantization constants (scales, zeros, absmax, g_idx) apart. For a
// GPTQ/AWQ checkpoint their sum is the size of its safetensors files
// (less small JSON headers); transformers' get_memory_footprint() counts
// weights only (a bitsandbytes quant_state is neither parameter nor
// buffer).
func WeightBytes(md *models.Model, o Options) (weights, consts int64, err error) {
	if err := o.Defaults(); err != nil {
		return 0, 0, err
	}
	if err := checkPEFTModel(md, o); err != nil {
		return 0, 0, err
	}
	pl := planPEFT(md, o)
	dt := dtypesFor(o.Precision).param
	for _, p := range md.Params() {
		k := keyOf(p)
		if li := pl.linears[k]; pl.quant[k] && li != nil {
			for _, part := range o.Quant.quantParts(li.in, li.out) {
				if part.consts {
					consts += part.elems * part.dt
				} else {
					weights += part.elems * part.dt
				}
			}
			continue
		}
		if o.Quant.Method != "" || o.PEFT.Method != "" {
			weights += p.Elems * pl.wdt[k]
			continue
		}
		weights += p.Elems * dt
	}
	return weights, consts, nil
}
