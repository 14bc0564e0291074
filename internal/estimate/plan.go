package estimate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// The plan search: combinations of levers that fit the budget, fastest
// first by a simple cost model (docs/estimate.md, "A plan that fits").
//
// A combination is a choice on every lever axis (checkpointing,
// precision, optimizer, attention, LoRA/QLoRA when fine-tuning, the
// multi-GPU layout when more GPUs were stated) and a micro-batch ×
// accumulation split of the same effective batch. For each choice of the
// axes the largest micro-batch that fits is taken (fewer micro-steps are
// never slower in the model); the choices are visited in the order of the
// cost they would have with no accumulation at all, which no split can
// beat, so the search stops as soon as that bound is above the Top-th
// best found: a branch-and-bound that estimates a few dozen
// configurations where the product of the axes has hundreds.

// PlanRequest says what the search may change.
type PlanRequest struct {
	// GPUs the user says the job may use; multi-GPU layouts only above 1.
	GPUs int
	// FineTune: the job fine-tunes a pretrained model, so LoRA and QLoRA
	// are levers.
	FineTune bool
	// Top is how many combinations to keep (DefaultPlanTop if 0).
	Top int
	// Always: search even when the job fits as given (--plan).
	Always bool
}

// DefaultPlanTop is how many combinations a plan shows.
const DefaultPlanTop = 5

// Cost model constants (docs/estimate.md).
const (
	// passFwd, passBwd: a backward pass costs two forwards (input and
	// weight gradients); checkpointing adds one forward; a frozen base
	// (LoRA) has no weight gradients, so its backward costs one forward.
	passFwd, passBwd, passBwdFrozen = 1.0, 2.0, 1.0
	// qloraSlowdown: bitsandbytes dequantizes each 4-bit weight for every
	// GEMM, forward and backward.
	qloraSlowdown = 1.3
	// fp32Slowdown: fp32 GEMMs (TF32 at best) against bf16/fp16 tensor
	// cores; autocast pays its casts.
	fp32Slowdown, autocastSlowdown = 2.0, 1.1
	// microStepTokens: each micro-step costs a fixed overhead worth this
	// many tokens of compute (kernel launches, a small GEMM's poor
	// utilisation, the optimizer's hooks): a micro-batch of t tokens runs
	// at t/(t+microStepTokens) of full speed.
	microStepTokens = 512
	// zero3Comm: ZeRO-3/FSDP all-gather every parameter in forward and
	// backward (1.5x DDP's traffic), partly exposed.
	zero3Comm = 1.15
	// searchAccum: the micro-steps per optimizer step the search replays.
	searchAccum = 2
	// tpComm: each doubling of the tensor-parallel degree adds an
	// all-reduce (or reduce-scatter + all-gather) per block half.
	tpComm = 0.1
	// offloadSlowdown: FSDP's CPU offload copies every shard in over PCIe
	// for each gather and every gradient out, and runs the optimizer's
	// step on the CPU (torch's AdamW there is bound by host memory
	// bandwidth); reports put it at 2-5x: the plan takes it last.
	offloadSlowdown = 3.0
)

// Combination is one set of settings that fits, with its cost.
type Combination struct {
	// Flags are the estimate flags that differ from the job as given.
	Flags    string  `json:"flags"`
	Settings Options `json:"settings"`
	GPUs     int     `json:"gpus"`
	// PeakAllocatedBytes and ProcessBytes are per GPU.
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	ProcessBytes       int64 `json:"process_bytes"`
	// Cost is the optimizer step's time relative to the job as given on
	// one GPU (lower is faster), by the cost model.
	Cost float64 `json:"cost"`
}

// PlanSearch is the result of the plan search.
type PlanSearch struct {
	EffectiveBatch int           `json:"effective_batch"`
	GPUs           int           `json:"gpus"`
	Estimated      int           `json:"configurations_estimated"`
	Combinations   []Combination `json:"combinations"`
}

// choice is one setting of a lever axis.
type choice struct {
	flag  string              // as estimate flags; "" for the job's own setting
	apply func(*Options) bool // false: does not apply to this job
}

// axis is one lever the search may set, with its choices; the first
// choice of each axis is the job as given. A new lever is one entry in
// planAxes.
type axis func(md *models.Model, o Options, req PlanRequest) []choice

// asGiven is an axis's first choice: the job's own setting.
var asGiven = choice{apply: func(*Options) bool { return true }}

var planAxes = []axis{
	// Activation checkpointing.
	func(_ *models.Model, o Options, _ PlanRequest) []choice {
		if o.Inference || o.Checkpointing {
			return []choice{asGiven}
		}
		return []choice{asGiven, {"--checkpointing", func(o *Options) bool { o.Checkpointing = true; return true }}}
	},
	// Precision: only towards fewer bytes.
	func(_ *models.Model, o Options, _ PlanRequest) []choice {
		cs := []choice{asGiven}
		if o.Precision == "fp32" {
			cs = append(cs, choice{"--precision amp-bf16", func(o *Options) bool { o.Precision = "amp-bf16"; return true }})
		}
		if o.Precision == "fp32" || strings.HasPrefix(o.Precision, "amp-") {
			cs = append(cs, choice{"--precision bf16", func(o *Options) bool { o.Precision = "bf16"; return true }})
		}
		return cs
	},
	// FSDP's own mixed precision over fp32 weights (after the precision
	// axis and the layout: FSDP and the weights' dtype are known by then).
	func(_ *models.Model, o Options, _ PlanRequest) []choice {
		if !o.fsdpMixedPrecisionFits() {
			return []choice{asGiven}
		}
		return []choice{asGiven, {"--fsdp-param-dtype bf16", func(o *Options) bool { o.FSDPParamDType = "bf16"; return true }}}
	},
	// FSDP's CPU offload (after the layout: FSDP is known by then).
	func(_ *models.Model, o Options, _ PlanRequest) []choice {
		if !o.fsdpOffloadFits() {
			return []choice{asGiven}
		}
		return []choice{asGiven, {"--fsdp-offload", func(o *Options) bool { o.FSDPOffload = true; return true }}}
	},
	// Optimizer: 8-bit states.
	func(_ *models.Model, o Options, _ PlanRequest) []choice {
		if o.Inference || (o.Optimizer != "adamw" && o.Optimizer != "adam" && o.Optimizer != "") {
			return []choice{asGiven}
		}
		return []choice{asGiven, {"--optimizer adamw-8bit", func(o *Options) bool { o.Optimizer = "adamw-8bit"; return true }}}
	},
	// Attention: memory-efficient kernels.
	func(md *models.Model, o Options, _ PlanRequest) []choice {
		fam, err := familyOf(md)
		if err != nil || o.Attention != "eager" || fam.alwaysEager() || fam.images() {
			return []choice{asGiven}
		}
		return []choice{asGiven, {"--attention sdpa", func(o *Options) bool { o.Attention = "sdpa"; return true }}}
	},
	// LoRA / QLoRA, when fine-tuning (peft.go).
	func(_ *models.Model, o Options, req PlanRequest) []choice {
		if o.Inference || !(req.FineTune || o.PEFT.Method != "") {
			return []choice{asGiven}
		}
		cs := []choice{asGiven}
		if o.PEFT.Method == "" {
			cs = append(cs, choice{"--peft lora", func(o *Options) bool {
				o.PEFT.Method = "lora"
				return o.ZeroStage < 3
			}})
		}
		if o.PEFT.Method != "qlora" {
			cs = append(cs, choice{"--peft qlora", func(o *Options) bool {
				o.PEFT.Method, o.Quant.Method = "qlora", "nf4"
				if o.Precision == "fp32" { // the QLoRA recipe computes in bf16
					o.Precision = "bf16"
				}
				return o.ZeroStage < 3
			}})
		}
		return cs
	},
}

// layout is a multi-GPU arrangement of the stated GPUs.
type layout struct {
	flag  string
	gpus  int
	apply func(*Options)
}

// layouts are the ways to spread the job over req.GPUs: the job as given
// when one GPU (or its own layout) is all there is, else every TP degree
// dividing the GPUs with the data-parallel rest as DDP, ZeRO-2 or FSDP;
// inference splits the model by TP over all of them.
func layouts(o Options, req PlanRequest) []layout {
	own := layout{gpus: max(1, o.WorldSize), apply: func(*Options) {}}
	if req.GPUs <= 1 {
		return []layout{own}
	}
	out := []layout{own}
	if o.Inference {
		for tp := 2; tp <= req.GPUs; tp *= 2 {
			if req.GPUs%tp == 0 {
				tp := tp
				out = append(out, layout{fmt.Sprintf("--tp %d --world-size %d", tp, tp), tp, func(o *Options) {
					o.TP, o.WorldSize = tp, tp
				}})
			}
		}
		return out
	}
	for tp := 1; tp <= req.GPUs; tp *= 2 {
		if req.GPUs%tp != 0 {
			continue
		}
		dp := req.GPUs / tp
		tpFlag := ""
		if tp > 1 {
			tpFlag = fmt.Sprintf(" --tp %d --sequence-parallel", tp)
		}
		set := func(zero int, fsdp, ddp bool) func(*Options) {
			return func(o *Options) {
				o.WorldSize, o.TP, o.SequenceParallel = req.GPUs, tp, tp > 1
				o.ZeroStage, o.FSDP, o.DDP, o.DDPBucketView = zero, fsdp, ddp, ddp
			}
		}
		if dp == 1 {
			out = append(out, layout{strings.TrimSpace(tpFlag) + fmt.Sprintf(" --world-size %d", req.GPUs), req.GPUs, set(0, false, false)})
			continue
		}
		out = append(out,
			layout{fmt.Sprintf("--ddp --ddp-bucket-view --world-size %d%s", req.GPUs, tpFlag), req.GPUs, set(0, false, true)},
			layout{fmt.Sprintf("--zero 2 --world-size %d%s", req.GPUs, tpFlag), req.GPUs, set(2, false, false)},
			layout{fmt.Sprintf("--fsdp --world-size %d%s", req.GPUs, tpFlag), req.GPUs, set(3, true, false)})
	}
	return out
}

// stepCost is the cost model's wall time for one optimizer step of o, in
// forward passes over one token: what each rank runs (its micro-batches
// of Batch, Accum of them, a TP rank 1/TP of each), the ranks in parallel.
func stepCost(md *models.Model, o Options) float64 {
	passes := passFwd + passBwd
	switch {
	case o.Inference:
		passes = passFwd
	case o.PEFT.Method != "":
		passes = passFwd + passBwdFrozen
	}
	if o.Checkpointing && !o.Inference {
		passes += passFwd
	}
	f := passes
	switch {
	case o.PEFT.Method == "qlora":
		f *= qloraSlowdown
	case o.FSDPParamDType != "": // FSDP's mixed precision computes in half
	case o.Precision == "fp32":
		f *= fp32Slowdown
	case strings.HasPrefix(o.Precision, "amp-"):
		f *= autocastSlowdown
	}
	tokens := float64(max(1, o.Seq))
	if md.IsVision() {
		p := float64(max(1, imageSizeOf(md, o)/16))
		tokens = p * p
	}
	tp := max(1, o.TP)
	perMicro := float64(o.Batch)*tokens/float64(tp) + microStepTokens
	comm := 1.0
	if o.ZeroStage == 3 {
		comm *= zero3Comm
	}
	if tp > 1 {
		comm *= 1 + tpComm*math.Log2(float64(tp))
	}
	if o.FSDPOffload {
		comm *= offloadSlowdown
	}
	return f * perMicro * float64(o.Accum) * comm
}

// divisors of n, ascending.
func divisors(n int) []int {
	var d []int
	for i := 1; i <= n; i++ {
		if n%i == 0 {
			d = append(d, i)
		}
	}
	return d
}

// Search finds the fastest combinations of levers that fit budget.
func Search(md *models.Model, base Options, budget int64, req PlanRequest) (*PlanSearch, error) {
	if err := base.Defaults(); err != nil {
		return nil, err
	}
	if req.Top <= 0 {
		req.Top = DefaultPlanTop
	}
	if req.GPUs < 1 {
		req.GPUs = max(1, base.WorldSize)
	}
	base.AllocatorLimit = base.limitIn(budget)
	effective := base.Batch * base.Accum * base.dataParallel()
	ps := &PlanSearch{EffectiveBatch: effective, GPUs: req.GPUs, Combinations: []Combination{}}
	baseCost := stepCost(md, base)

	type cand struct {
		o     Options
		flags []string
		gpus  int
		bound float64
	}
	var cands []cand
	seen := map[string]bool{}
	var walkAxes func(i int, o Options, flags []string)
	var lay layout
	walkAxes = func(i int, o Options, flags []string) {
		if i == len(planAxes) {
			c := cand{o: o, flags: append([]string(nil), flags...), gpus: lay.gpus}
			perRank := effective / o.dataParallel()
			if perRank*o.dataParallel() != effective || perRank < 1 {
				return // the effective batch does not split over the ranks
			}
			c.o.Batch, c.o.Accum = perRank, 1
			c.bound = stepCost(md, c.o)
			key := fmt.Sprintf("%+v", c.o)
			if !seen[key] {
				seen[key] = true
				cands = append(cands, c)
			}
			return
		}
		for _, ch := range planAxes[i](md, o, req) {
			o2 := o
			if !ch.apply(&o2) {
				continue
			}
			f := flags
			if ch.flag != "" {
				f = append(append([]string(nil), flags...), ch.flag)
			}
			walkAxes(i+1, o2, f)
		}
	}
	for _, l := range layouts(base, req) {
		lay = l
		o := base
		l.apply(&o)
		var flags []string
		if l.flag != "" {
			flags = []string{l.flag}
		}
		walkAxes(0, o, flags)
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].bound < cands[j].bound })

	// A micro-step after the second allocates what the second did (the
	// gradients exist; a fresh one is added in place), so the search
	// replays at most two per optimizer step: a 32-step accumulation
	// costs the estimate of a 2-step one.
	est := func(o Options) *Result {
		ps.Estimated++
		o.Accum = min(o.Accum, searchAccum)
		r, err := Estimate(md, o)
		if err != nil || !fitsIn(r, budget) {
			return nil
		}
		return r
	}
	for _, c := range cands {
		if len(ps.Combinations) >= req.Top && c.bound >= ps.Combinations[req.Top-1].Cost*baseCost {
			break
		}
		perRank := c.o.Batch
		ds := divisors(perRank)
		// The largest micro-batch that fits: bisection over the divisors.
		lo, hi := -1, len(ds)
		var best *Result
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			o := c.o
			o.Batch, o.Accum = ds[mid], perRank/ds[mid]
			if r := est(o); r != nil {
				lo, best = mid, r
			} else {
				hi = mid
			}
		}
		if lo < 0 {
			continue
		}
		o := c.o
		o.Batch, o.Accum = ds[lo], perRank/ds[lo]
		if best == nil || best.Opts.Batch != o.Batch {
			if best = est(o); best == nil {
				continue
			}
		}
		// Agree with the fit check: near the budget, the micro-batch must
		// also have every smaller batch fitting (maxbatch.go).
		if !settled(best, o.AllocatorLimit) {
			mb := MaxBatch(md, o, budget)
			for lo >= 0 && ds[lo] > mb {
				lo--
			}
			if lo < 0 {
				continue
			}
			o.Batch, o.Accum = ds[lo], perRank/ds[lo]
			if best = est(o); best == nil {
				continue
			}
		}
		split := fmt.Sprintf("--batch %d --accum %d", o.Batch, o.Accum)
		if o.Inference {
			split = fmt.Sprintf("--batch %d", o.Batch)
		}
		flags := append([]string{split}, c.flags...)
		o.AllocatorLimit = 0
		cb := Combination{Flags: strings.Join(flags, " "), Settings: o, GPUs: c.gpus,
			PeakAllocatedBytes: best.PeakAllocatedBytes, ProcessBytes: best.ProcessBytes,
			Cost: stepCost(md, o) / baseCost}
		if redundant(ps.Combinations, cb) {
			continue
		}
		ps.Combinations = append(ps.Combinations, cb)
		sort.SliceStable(ps.Combinations, func(i, j int) bool { return ps.Combinations[i].Cost < ps.Combinations[j].Cost })
		if len(ps.Combinations) > req.Top {
			ps.Combinations = ps.Combinations[:req.Top]
		}
	}
	return ps, nil
}

// redundant: an equally fast combination with a subset of c's levers
// (and the same micro-batch) is already there; a lever that buys nothing
// is not worth showing.
func redundant(have []Combination, c Combination) bool {
	for _, h := range have {
		if math.Abs(h.Cost-c.Cost) < 1e-9 && strings.HasPrefix(c.Flags, h.Flags) {
			return true
		}
	}
	return false
}
