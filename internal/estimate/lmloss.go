package estimate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// How transformers' causal-LM loss allocates changed twice (read in each
// version's modeling_llama.py, modeling_gpt2.py and loss/loss_utils.py;
// bench/results/estimate-peft.md has the commits). --transformers VERSION
// picks the one the job runs; unset, the current one.
type lossLayout int

const (
	// lossAsIs: the current ForCausalLMLoss (4.49 on): logits.float(),
	// the labels padded and shifted, cross_entropy over every position.
	// Also every loss that never shifted (BERT's MLM, T5).
	lossAsIs lossLayout = iota
	// lossShiftInLoss (4.46-4.48, Llama-family): ForCausalLMLoss upcasts
	// while the model still holds its half-precision logits, then copies
	// the shifted fp32 logits (logits[..., :-1, :].contiguous()).
	lossShiftInLoss
	// lossShiftInModel (up to 4.45, Llama-family): the forward upcasts
	// (logits = logits.float(), the half-precision ones go), then copies
	// the shifted fp32 logits.
	lossShiftInModel
	// lossShiftNoUpcast (GPT-2 up to 4.48): the shifted logits copied in
	// their own dtype; autocast casts that copy to fp32 for cross_entropy.
	lossShiftNoUpcast
)

// The versions where the loss changed.
var (
	transformersLossFunction = version{4, 46} // loss/loss_utils.py's ForCausalLMLoss (PR 34191)
	transformersPadLabels    = version{4, 49} // labels padded, no logits copy (PR 35646)
)

// version is a transformers release, major.minor.
type version struct{ major, minor int }

func (v version) before(w version) bool {
	return v.major < w.major || v.major == w.major && v.minor < w.minor
}

// parseVersion reads "4.48", "4.48.1" or "4.48.0.dev0"; "" is the current one.
func parseVersion(s string) (version, bool, error) {
	if s == "" {
		return version{}, false, nil
	}
	f := strings.SplitN(s, ".", 3)
	if len(f) < 2 {
		return version{}, false, fmt.Errorf("--transformers %q: want a version such as 4.48 or 4.48.1", s)
	}
	major, err1 := strconv.Atoi(f[0])
	minor, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || major < 1 || minor < 0 || major > 99 || minor > 999 {
		return version{}, false, fmt.Errorf("--transformers %q: want a version such as 4.48 or 4.48.1", s)
	}
	return version{major, minor}, true, nil
}

// causalLossLayout is the Llama-family rule (Llama, Mistral, Qwen2,
// Mixtral, Granite): Mistral 4.46-4.47 upcast in its forward still, as
// 4.45 did, and is taken as Llama's (that keeps its half-precision
// logits as well: 2 bytes an element over).
func causalLossLayout(v version, set bool) lossLayout {
	switch {
	case !set || !v.before(transformersPadLabels):
		return lossAsIs
	case !v.before(transformersLossFunction):
		return lossShiftInLoss
	}
	return lossShiftInModel
}

// gpt2LossLayout: GPT2LMHeadModel shifted its logits in its forward
// without an upcast until it took ForCausalLMLoss in 4.49.
func gpt2LossLayout(v version, set bool) lossLayout {
	if !set || !v.before(transformersPadLabels) {
		return lossAsIs
	}
	return lossShiftNoUpcast
}

// lmLossShift is the loss of the layouts that copy the shifted logits
// (rows = tokens - batch, one position fewer per sample): what it
// allocates, holds and saves on logits (made by the output layer), which
// it consumes. ldt is the loss's dtype.
func (e *ctx) lmLossShift(logits *tensor, l lossLayout, ldt int64) {
	V := int64(e.md.Vocab)
	rows := e.tokens() - int64(e.o.Batch)
	var held []*tensor
	f := logits
	switch l {
	case lossShiftInModel:
		if logits.dt != 4 { // logits = logits.float(): the half ones go
			f = e.act(logits.elems, 4)
			e.m.drop(logits)
		}
		ldt = 4
	case lossShiftInLoss:
		if logits.dt != ldt {
			f = e.act(logits.elems, ldt)
			held = append(held, logits) // the model's output holds them
		}
	case lossShiftNoUpcast:
		ldt = logits.dt
	}
	shift := e.act(rows*V, f.dt)
	in := shift
	if l == lossShiftNoUpcast && e.dt.autocast && shift.dt != 4 {
		in = e.act(rows*V, 4) // autocast's fp32 copy for cross_entropy
		ldt = 4
	}
	lsm := e.act(rows*V, ldt)
	e.m.save(lsm)
	e.m.drop(append(held, f, shift, in, lsm)...)
}

// lmLossBackwardShift is the loss gradient of the shifting layouts,
// ending with the logits' gradient (in their dtype) live: nll_loss's and
// log_softmax's over the shifted rows, autocast's cast back (GPT-2),
// then the shift's SliceBackward writing them into zeros of the full
// logits shape, then the upcast's cast back.
func (e *ctx) lmLossBackwardShift(l lossLayout, lsm []*tensor) *tensor {
	V := int64(e.md.Vocab)
	rows, T := e.tokens()-int64(e.o.Batch), e.tokens()
	gdt := int64(4)
	for _, t := range lsm {
		gdt = t.dt
	}
	cdt := e.logitsDT()
	g1 := e.m.new(rows*V, gdt, CatLoss)
	g := e.m.new(rows*V, gdt, CatLoss)
	e.m.drop(g1)
	e.m.unsave(lsm...)
	if l == lossShiftNoUpcast && gdt != cdt { // autocast's cast of the shifted copy
		c := e.m.new(rows*V, cdt, CatLoss)
		e.m.drop(g)
		g = c
	}
	full := e.m.new(T*V, g.dt, CatLoss) // SliceBackward: zeros, then the rows copied in
	e.m.drop(g)
	if full.dt != cdt {
		c := e.m.new(T*V, cdt, CatLoss)
		e.m.drop(full)
		full = c
	}
	return full
}

// lossLayout is the causal-LM loss layout of this job: the family's rule
// for --transformers, the current one for a classifier or in inference.
func (e *ctx) lossLayout() lossLayout {
	if e.o.Inference || e.fam.images() || e.md.SeqClassification {
		return lossAsIs
	}
	v, set, err := parseVersion(e.o.Transformers)
	if err != nil { // Options.check refused it already
		return lossAsIs
	}
	return e.fam.lossLayout(v, set)
}

// OlderLossVersion is the config's transformers version when the job,
// run by that version, would take a loss other than the one estimated
// (no --transformers given, training a causal LM whose config.json an
// older release wrote); "" otherwise. The CLI says so: whether the job
// runs that release only the user knows.
func OlderLossVersion(md *models.Model, o Options) string {
	if o.Transformers != "" || o.Inference || md.SeqClassification || md.ConfigTransformers == "" {
		return ""
	}
	fam, err := familyOf(md)
	if err != nil || fam.images() {
		return ""
	}
	v, set, err := parseVersion(md.ConfigTransformers)
	if err != nil || fam.lossLayout(v, set) == lossAsIs {
		return ""
	}
	return md.ConfigTransformers
}
