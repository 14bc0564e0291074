package estimate

import (
	"fmt"
	"strings"

	"github.com/torchmem/torchmem/internal/allocconf"
)

// Options describe the job being estimated. Zero values are filled in by
// Defaults (batch 1, fp32, AdamW foreach, one micro-step, SDPA).
type Options struct {
	Batch     int    `json:"batch"`
	Seq       int    `json:"seq,omitempty"`        // tokens per sample (transformers)
	ImageSize int    `json:"image_size,omitempty"` // pixels per side (vision)
	Precision string `json:"precision"`            // fp32, amp-bf16, amp-fp16, bf16, fp16
	Optimizer string `json:"optimizer,omitempty"`  // adamw, adam, sgd, sgd-momentum, adafactor, adamw-8bit
	// OptimizerImpl is foreach (PyTorch's default on CUDA) or fused.
	OptimizerImpl string `json:"optimizer_impl,omitempty"`
	Accum         int    `json:"accum"`
	Checkpointing bool   `json:"checkpointing"`
	Attention     string `json:"attention"` // sdpa, flash, eager
	ZeroStage     int    `json:"zero_stage,omitempty"`
	// ZeroBucket: DeepSpeed's reduce_bucket_size, in elements (stages 2
	// and 3); 0 is DeepSpeed's default, DefaultZeroBucket.
	ZeroBucket int `json:"zero_bucket,omitempty"`
	// ZeroOverlapComm: DeepSpeed's overlap_comm; at stage 2 it keeps two
	// reduce buckets through each backward (stage 3 is unchanged).
	ZeroOverlapComm bool `json:"zero_overlap_comm,omitempty"`
	// FSDP: PyTorch FSDP full sharding (ZeroStage 3) rather than DeepSpeed:
	// no fp32 master copy, no gradient bucket.
	FSDP bool `json:"fsdp,omitempty"`
	// FSDPParamDType: FSDP's own mixed precision (FSDP1's
	// MixedPrecision(param_dtype=), FSDP2's MixedPrecisionPolicy): fp32
	// shards, gradients and states; each unit all-gathered in this dtype
	// ("bf16" or "fp16"), which the model then computes in, its unsharded
	// gradients too. "": the parameters' own dtype.
	FSDPParamDType string `json:"fsdp_param_dtype,omitempty"`
	// FSDPOffload: FSDP's CPU offload (FSDP2's CPUOffloadPolicy, FSDP1's
	// CPUOffload(offload_params=True)): the shards, their gradients and
	// the optimizer's states in (pinned) host RAM, the step on the CPU;
	// the GPU holds each unit while it is gathered.
	FSDPOffload bool `json:"fsdp_offload,omitempty"`
	// DDP: DistributedDataParallel, every rank a full replica. Its reducer
	// allocates flat all-reduce buckets the size of all gradients once, at
	// construction; DDPBucketView (gradient_as_bucket_view=True) makes the
	// .grad tensors views into them instead of a second copy.
	DDP           bool `json:"ddp,omitempty"`
	DDPBucketView bool `json:"ddp_bucket_view,omitempty"`
	WorldSize     int  `json:"world_size,omitempty"`
	Inference     bool `json:"inference"`
	KVCache       bool `json:"kv_cache,omitempty"`
	GenLen        int  `json:"gen_len,omitempty"`
	// NoLoadFP32: half-precision weights are loaded straight in half
	// (from_pretrained(torch_dtype=...)). By default they are taken to be
	// made in fp32 on the GPU and cast there (model.cuda().bfloat16()),
	// whose cached fp32 segments raise the reserved memory: the
	// conservative choice for a fit check.
	NoLoadFP32 bool `json:"no_load_fp32,omitempty"`
	// ExpertCapacity pads every expert of a mixture-of-experts layer to
	// ceil(factor * tokens * top-k / experts) rows, as capacity-based MoE
	// implementations do; 0: dropless, as transformers runs (moe.go).
	ExpertCapacity float64 `json:"expert_capacity,omitempty"`
	// TP is the tensor-parallel degree and SequenceParallel splits the
	// residual stream's activations by the sequence too (tp.go).
	TP               int  `json:"tp,omitempty"`
	SequenceParallel bool `json:"sequence_parallel,omitempty"`
	// Steps is how many optimizer steps to replay (3: the peak settles by the second).
	Steps int `json:"-"`
	// ComputeCapability of the GPU (major*10+minor) sizes the cuBLAS workspace; 90 if unset.
	ComputeCapability int `json:"-"`
	// AllocatorLimit is what the caching allocator may reserve (the GPU's
	// memory less the CUDA context and libraries); 0 for no limit. At the
	// limit it frees its cache and retries, as PyTorch does when cudaMalloc
	// fails, and reports an out-of-memory error when that is not enough.
	AllocatorLimit int64 `json:"-"`
	// Alloc: the options of PYTORCH_CUDA_ALLOC_CONF the allocator model
	// follows (expandable segments, max_split_size_mb; the fraction is a
	// limit, Plan's).
	Alloc allocconf.Conf `json:"-"`
	// capBytes: the cap Alloc's fraction puts on the allocator on Plan's
	// GPU (0: none under the budget's limit); limitIn keeps to it.
	capBytes int64
	// gpuBytes: Plan's GPU's memory (0: none), which sizes an expandable
	// segment's address space and the fraction's collection threshold.
	gpuBytes int64
	// PEFT: LoRA adapters on a frozen (QLoRA: quantized) base (peft.go).
	PEFT PEFTOptions `json:"peft,omitempty"`
	// Quant: quantized weights and the KV cache's dtype (quant.go).
	Quant QuantOptions `json:"quant,omitempty"`
	// Transformers is the Hugging Face transformers version the job runs
	// ("4.48", "4.48.1"): before 4.49 the causal-LM loss copied the shifted
	// logits (lmloss.go). Empty: the current layout.
	Transformers string `json:"transformers,omitempty"`
}

var (
	precisions = []string{"fp32", "amp-bf16", "amp-fp16", "bf16", "fp16"}
	optimizers = []string{"adamw", "adam", "sgd", "sgd-momentum", "adafactor", "adamw-8bit", "paged-adamw", "paged-adamw-8bit"}
)

// Defaults fills unset fields and checks the rest.
func (o *Options) Defaults() error {
	if o.Batch == 0 {
		o.Batch = 1
	}
	if o.Precision == "" {
		o.Precision = "fp32"
	}
	if o.Optimizer == "" && !o.Inference {
		o.Optimizer = "adamw"
	}
	if o.OptimizerImpl == "" {
		o.OptimizerImpl = "foreach"
	}
	if o.Accum == 0 {
		o.Accum = 1
	}
	if o.Attention == "" {
		o.Attention = "sdpa"
	}
	if o.WorldSize == 0 {
		o.WorldSize = 1
	}
	if o.Steps == 0 {
		o.Steps = 3
	}
	if o.ComputeCapability == 0 {
		o.ComputeCapability = 90
	}
	return o.check()
}

func (o *Options) check() error {
	if _, _, err := parseVersion(o.Transformers); err != nil {
		return err
	}
	if err := checkFSDPParamDType(*o); err != nil {
		return err
	}
	if err := checkFSDPOffload(*o); err != nil {
		return err
	}
	switch {
	case o.Batch < 1 || o.Batch > 1<<20:
		return fmt.Errorf("--batch %d out of range (1..%d)", o.Batch, 1<<20)
	case o.Seq < 0 || o.Seq > 1<<22 || o.ImageSize < 0 || o.ImageSize > 1<<15:
		return fmt.Errorf("--seq or --image-size out of range")
	case !oneOf(o.Precision, precisions):
		return fmt.Errorf("--precision %q: want one of %s", o.Precision, strings.Join(precisions, ", "))
	case !o.Inference && !oneOf(o.Optimizer, optimizers):
		return fmt.Errorf("--optimizer %q: want one of %s", o.Optimizer, strings.Join(optimizers, ", "))
	case o.OptimizerImpl != "foreach" && o.OptimizerImpl != "fused":
		return fmt.Errorf("--optimizer-impl %q: want foreach or fused", o.OptimizerImpl)
	case o.Accum < 1 || o.Accum > 1<<16:
		return fmt.Errorf("--accum %d out of range", o.Accum)
	case !oneOf(o.Attention, []string{"sdpa", "flash", "eager"}):
		return fmt.Errorf("--attention %q: want sdpa, flash or eager", o.Attention)
	case o.ZeroStage < 0 || o.ZeroStage > 3:
		return fmt.Errorf("--zero %d: want 1, 2 or 3", o.ZeroStage)
	case o.FSDP && o.ZeroStage != 3:
		return fmt.Errorf("FSDP full sharding is ZeRO stage 3")
	case o.ZeroBucket < 0 || o.ZeroBucket > maxZeroBucket:
		return fmt.Errorf("--zero-bucket %d out of range (1..%d elements)", o.ZeroBucket, maxZeroBucket)
	case o.ZeroBucket > 0 && (o.ZeroStage < 2 || o.FSDP):
		return fmt.Errorf("--zero-bucket is DeepSpeed's reduce_bucket_size: it needs --zero 2 or 3")
	case o.ZeroOverlapComm && (o.ZeroStage < 2 || o.FSDP):
		return fmt.Errorf("--zero-overlap-comm is DeepSpeed's overlap_comm: it needs --zero 2 or 3")
	case o.DDP && o.ZeroStage > 0:
		return fmt.Errorf("--ddp replicates the model; --zero and --fsdp shard it: give one of them")
	case o.DDP && o.Inference:
		return fmt.Errorf("--ddp is for training (inference has no gradients to all-reduce)")
	case o.DDPBucketView && !o.DDP:
		return fmt.Errorf("--ddp-bucket-view needs --ddp")
	case o.WorldSize < 1 || o.WorldSize > 1<<16:
		return fmt.Errorf("--world-size %d out of range", o.WorldSize)
	case o.GenLen < 0 || o.GenLen > 1<<22:
		return fmt.Errorf("--gen-len %d out of range", o.GenLen)
	case o.GenLen > 0 && !o.Inference:
		return fmt.Errorf("--gen-len needs --inference")
	case o.KVCache && !o.Inference:
		return fmt.Errorf("--kv-cache needs --inference (training keeps no KV cache)")
	}
	if err := o.checkParallel(); err != nil {
		return err
	}
	return o.checkPEFTQuant()
}

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// dtypes are the element sizes a precision mode gives each kind of tensor.
type dtypes struct {
	param, grad, state int64
	work               int64 // the weights as the model uses them: gathered, embedding outputs
	unshardedGrad      int64 // a gradient before its reduce-scatter
	compute            int64 // outputs of GEMMs, attention, activations
	resid              int64 // the residual stream and embeddings
	norm               int64 // LayerNorm/RMSNorm outputs
	autocast           bool
}

func dtypesFor(precision string) dtypes {
	d := precisionDtypes(precision)
	d.work, d.unshardedGrad = d.param, d.grad
	return d
}

func precisionDtypes(precision string) dtypes {
	switch precision {
	case "amp-bf16", "amp-fp16":
		// autocast: fp32 weights; GEMMs in half; norms, softmax, pow in fp32.
		return dtypes{param: 4, grad: 4, state: 4, compute: 2, resid: 4, norm: 4, autocast: true}
	case "bf16", "fp16":
		return dtypes{param: 2, grad: 2, state: 2, compute: 2, resid: 2, norm: 2}
	}
	return dtypes{param: 4, grad: 4, state: 4, compute: 4, resid: 4, norm: 4}
}

// dtypesOf: the precision's dtypes, and FSDP's mixed precision on top:
// the shards, their gradients and the states stay fp32 while the model
// works in the half dtype it all-gathers (an fp32 run then computes in
// half as a bf16 model does; under autocast the weights need no casts).
func dtypesOf(o Options) dtypes {
	d := dtypesFor(o.Precision)
	if o.FSDPParamDType != "" {
		d.work, d.unshardedGrad, d.resid = 2, 2, 2
		if !d.autocast {
			d.compute, d.norm = 2, 2
		}
	}
	return d
}

// checkFSDPParamDType: FSDP's mixed precision gathers fp32 shards in half.
func checkFSDPParamDType(o Options) error {
	switch {
	case o.FSDPParamDType == "":
		return nil
	case o.FSDPParamDType != "bf16" && o.FSDPParamDType != "fp16":
		return fmt.Errorf("--fsdp-param-dtype %q: want bf16 or fp16", o.FSDPParamDType)
	case !o.FSDP:
		return fmt.Errorf("--fsdp-param-dtype is FSDP's mixed precision: it needs --fsdp")
	case dtypesFor(o.Precision).param != 4:
		return fmt.Errorf("--fsdp-param-dtype: the weights are already %s (--precision); FSDP's mixed precision keeps fp32 shards: give --precision fp32 or amp-bf16/amp-fp16", o.Precision)
	}
	return nil
}

// checkFSDPOffload: CPU offload is FSDP's, for training.
func checkFSDPOffload(o Options) error {
	switch {
	case !o.FSDPOffload:
		return nil
	case !o.FSDP:
		return fmt.Errorf("--fsdp-offload is FSDP's CPU offload: it needs --fsdp")
	case o.Inference:
		return fmt.Errorf("--fsdp-offload: CPU offload is modelled for training, not --inference")
	case o.PEFT.Method != "":
		return fmt.Errorf("--fsdp-offload with --peft is not modelled: trace the script (estimate --trace)")
	}
	return nil
}

// fsdpOffloadFits: CPU offload is a change this job can take (FSDP
// training, not offloading yet): the lever's test.
func (o Options) fsdpOffloadFits() bool {
	return o.FSDP && !o.FSDPOffload && !o.Inference && o.PEFT.Method == ""
}

// fsdpMixedPrecisionFits: FSDP's own mixed precision is a change this job
// can take (FSDP training over fp32 weights, not asked for yet): the
// lever's and the plan axis's test.
func (o Options) fsdpMixedPrecisionFits() bool {
	return o.FSDP && o.FSDPParamDType == "" && dtypesFor(o.Precision).param == 4 && !o.Inference
}

// DefaultZeroBucket is DeepSpeed's default reduce_bucket_size (elements).
// DeepSpeed makes its contiguous gradient bucket this large whatever the
// model's size (torch.empty(reduce_bucket_size) in stage_1_and_2.py and
// stage3.py; a traced 8M-parameter model holds 954 MiB of it in bf16:
// bench/results/trace-real-scripts.md). The Trainer's "auto" sets
// hidden_size².
const DefaultZeroBucket = 500_000_000

// maxZeroBucket bounds --zero-bucket (2^40 elements: beyond any GPU).
const maxZeroBucket = 1 << 40

// zeroBucket: the reduce bucket's elements.
func (o Options) zeroBucket() int64 {
	if o.ZeroBucket > 0 {
		return int64(o.ZeroBucket)
	}
	return DefaultZeroBucket
}

// limitIn: what the allocator may reserve in budget, or under the job's
// cap when lower.
func (o Options) limitIn(budget int64) int64 {
	l := allocatorLimit(budget)
	if o.capBytes > 0 {
		l = min(l, o.capBytes)
	}
	return l
}
