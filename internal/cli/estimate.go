package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/torchmem/torchmem/internal/allocconf"
	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/estimate/models"
	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/units"
)

func init() { register("estimate", newEstimateCmd) }

type estimateFlags struct {
	config, safetensors, model string
	opts                       estimate.Options
	checkpointing              string
	fsdp, json, loadFP32       bool
	gpu, gpuMemory, margin     string
	head                       string
	numLabels                  int
	listModels, listGPUs       bool
	plan                       planFlags // estimate_plan.go
	worldSizeSet               bool      // --world-size given (--trace: a process group's default size)
	allocConf                  string    // --alloc-conf
}

// estimateAllocConf: the allocator options the job runs with, from
// --alloc-conf (set: the text to give the traced program as
// PYTORCH_CUDA_ALLOC_CONF) or else this shell's environment, which the
// job inherits.
func estimateAllocConf(f *estimateFlags, changed bool) (conf allocconf.Conf, set string, err error) {
	if changed {
		conf, err = allocconf.Parse(f.allocConf)
		if err != nil {
			return conf, "", fmt.Errorf("--alloc-conf %q: %w", f.allocConf, err)
		}
		return conf, f.allocConf, nil
	}
	name, val := allocconf.FromEnv(os.Getenv)
	if conf, err = allocconf.Parse(val); err != nil {
		return conf, "", fmt.Errorf("%s=%q: %w (torchmem doctor checks it; --alloc-conf overrides it)", name, termsafe.Line(val), err)
	}
	return conf, "", nil
}

func newEstimateCmd(env *Env) *cobra.Command {
	f := &estimateFlags{}
	cmd := &cobra.Command{
		Use:   "estimate (--config FILE | --safetensors FILE | --model NAME) [flags]",
		Short: "Peak GPU memory of a training or inference setup, and the largest batch that fits",
		Long: `Estimate the peak GPU memory of a PyTorch job before launching it: what
torch.cuda.max_memory_allocated() and max_memory_reserved() would report and
what nvidia-smi would show, broken down (weights, gradients, optimizer states
and temporaries, activations, autocast weight copies, logits and loss, KV
cache, allocator cache, CUDA context), the phase of the peak, whether it fits
a GPU, the largest batch that fits, and the levers that would save memory.

The model is walked op by op as the Hugging Face / torchvision code runs it,
and its allocations are replayed through a model of PyTorch's caching
allocator. Exit status: 0, or 2 when a GPU was given and the job does not fit,
or 3 when a --trace stopped early and what ran fits (whether the job fits is
not known).`,
		Example: `  torchmem estimate --model gpt2 --batch 8 --seq 1024 --precision amp-bf16 --gpu A100-80GB
  torchmem estimate --config config.json --batch 8 --seq 2048 --precision amp-bf16 --checkpointing --gpu H100-80GB
  torchmem estimate --model meta-llama/Llama-3.1-8B --seq 4096 --precision bf16 --fsdp --world-size 8 --gpu H100-80GB --json
  torchmem estimate --model resnet50 --batch 256 --image-size 224 --optimizer sgd-momentum --gpu-memory 24GiB
  torchmem estimate --safetensors model.safetensors.index.json --inference --kv-cache --seq 4096 --gen-len 512 --gpu L40S`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEstimate(env, cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "Hugging Face config.json (or {\"torchvision\": \"resnet50\"})")
	fl.StringVar(&f.safetensors, "safetensors", "", ".safetensors file or model.safetensors.index.json (header only)")
	fl.StringVar(&f.model, "model", "", "built-in model (see --list-models)")
	fl.IntVar(&f.opts.Batch, "batch", 1, "micro-batch size per GPU")
	fl.IntVar(&f.opts.Seq, "seq", 0, "sequence length in tokens (language models)")
	fl.IntVar(&f.opts.ImageSize, "image-size", 0, "image side in pixels (vision models; default the model's)")
	fl.StringVar(&f.opts.Precision, "precision", "fp32", "fp32, amp-bf16, amp-fp16 (autocast, fp32 weights), bf16, fp16 (pure)")
	fl.StringVar(&f.opts.Optimizer, "optimizer", "adamw", "adamw, adam, sgd, sgd-momentum, adafactor, adamw-8bit; with --peft also paged-adamw, paged-adamw-8bit")
	fl.StringVar(&f.opts.OptimizerImpl, "optimizer-impl", "foreach", "foreach (PyTorch's default on CUDA) or fused")
	fl.IntVar(&f.opts.Accum, "accum", 1, "gradient accumulation steps")
	fl.StringVar(&f.checkpointing, "checkpointing", "none", "activation checkpointing: full or none (--checkpointing alone = full)")
	fl.Lookup("checkpointing").NoOptDefVal = "full"
	fl.StringVar(&f.head, "head", "", "output head: lm (language-model loss over the vocabulary) or classification (sequence classifier); default from the config's architectures")
	fl.IntVar(&f.numLabels, "num-labels", 2, "labels of a --head classification classifier")
	fl.StringVar(&f.opts.Attention, "attention", "sdpa", "attention implementation: sdpa, flash or eager")
	fl.IntVar(&f.opts.ZeroStage, "zero", 0, "ZeRO stage 1, 2 or 3 (DeepSpeed)")
	fl.BoolVar(&f.opts.ZeroOverlapComm, "zero-overlap-comm", false, "with --zero 2 or 3: DeepSpeed's overlap_comm (at stage 2, two reduce buckets through each backward)")
	fl.IntVar(&f.opts.ZeroBucket, "zero-bucket", 0, "with --zero 2 or 3: DeepSpeed's reduce_bucket_size in elements (default DeepSpeed's 5e8; the Trainer's \"auto\" is hidden_size²)")
	fl.IntVar(&f.opts.WorldSize, "world-size", 1, "GPUs the ZeRO/FSDP shards are spread over; with --trace, the size of a process group that neither the program nor its launcher gives (torchrun --nproc-per-node gpu)")
	fl.BoolVar(&f.fsdp, "fsdp", false, "FSDP full sharding (same memory as ZeRO-3)")
	fl.StringVar(&f.opts.FSDPParamDType, "fsdp-param-dtype", "", "with --fsdp: FSDP's own mixed precision, bf16 or fp16 (MixedPrecision(param_dtype=...) / MixedPrecisionPolicy): fp32 shards, gradients and states, each unit gathered and computed in this dtype")
	fl.BoolVar(&f.opts.FSDPOffload, "fsdp-offload", false, "with --fsdp: FSDP's CPU offload (CPUOffloadPolicy / CPUOffload(offload_params=True)): shards, gradients and optimizer states in pinned host RAM, each unit copied in for its all-gather")
	fl.BoolVar(&f.opts.DDP, "ddp", false, "DistributedDataParallel: full replicas, plus the reducer's all-reduce buckets (one more copy of the gradients)")
	fl.BoolVar(&f.opts.DDPBucketView, "ddp-bucket-view", false, "with --ddp: gradient_as_bucket_view=True (the gradients are views into the buckets)")
	fl.BoolVar(&f.opts.Inference, "inference", false, "inference (no_grad forward) instead of training")
	fl.BoolVar(&f.opts.KVCache, "kv-cache", false, "inference keeps a KV cache (use_cache=True)")
	fl.IntVar(&f.opts.GenLen, "gen-len", 0, "tokens generated after the prompt (implies --kv-cache)")
	fl.StringVar(&f.opts.Transformers, "transformers", "", "the Hugging Face transformers version the job runs, e.g. 4.48 (before 4.49 the causal-LM loss copies the shifted logits); default: the current loss")
	fl.BoolVar(&f.loadFP32, "load-fp32", true, "half-precision weights are made in fp32 on the GPU, then cast (model.cuda().bfloat16()); false for from_pretrained(torch_dtype=...)")
	fl.StringVar(&f.gpu, "gpu", "", "GPU by name (see --list-gpus) or auto (the first local GPU)")
	fl.StringVar(&f.gpuMemory, "gpu-memory", "", "GPU memory instead of a name, e.g. 24GiB")
	fl.StringVar(&f.margin, "margin", "5%", "safety margin kept free on the GPU")
	fl.StringVar(&f.allocConf, "alloc-conf", "", "the job's PYTORCH_CUDA_ALLOC_CONF, e.g. expandable_segments:True (default: this shell's PYTORCH_ALLOC_CONF, else PYTORCH_CUDA_ALLOC_CONF, as torch >= 2.9 reads them); the replay follows expandable_segments, max_split_size_mb, roundup_power2_divisions and per_process_memory_fraction")
	fl.BoolVar(&f.json, "json", false, "print JSON")
	fl.BoolVar(&f.listModels, "list-models", false, "list the built-in models and exit")
	fl.BoolVar(&f.listGPUs, "list-gpus", false, "list the known GPUs and exit")
	addPEFTFlags(fl, &f.opts)
	addPlanFlags(fl, f)
	addTraceFlags(env, cmd, f) // estimate_trace.go
	return cmd
}

func runEstimate(env *Env, cmd *cobra.Command, f *estimateFlags) error {
	if f.listModels || f.listGPUs {
		return estimateLists(env, f)
	}
	md, err := estimateModel(f)
	if err != nil {
		return err
	}
	if err := estimateHead(md, f); err != nil {
		return err
	}
	if err := estimateCheckFlags(cmd, md); err != nil {
		return err
	}
	switch f.checkpointing {
	case "full":
		f.opts.Checkpointing = true
	case "none", "":
	default:
		return fmt.Errorf("--checkpointing %q: want full or none", f.checkpointing)
	}
	estimatePEFTFlags(cmd, f)
	if f.fsdp {
		if f.opts.ZeroStage != 0 && f.opts.ZeroStage != 3 {
			return errors.New("--fsdp shards like ZeRO-3; it cannot be combined with --zero 1 or 2")
		}
		f.opts.ZeroStage, f.opts.FSDP = 3, true
	}
	f.opts.NoLoadFP32 = !f.loadFP32
	if f.opts.Alloc, _, err = estimateAllocConf(f, cmd.Flags().Changed("alloc-conf")); err != nil {
		return err
	}
	if f.opts.Inference && !cmd.Flags().Changed("optimizer") {
		f.opts.Optimizer = ""
	}
	margin, err := units.ParsePercent(f.margin)
	if err != nil {
		return fmt.Errorf("--margin: %w", err)
	}
	g, haveGPU, err := estimateGPU(env, f)
	if err != nil {
		return err
	}
	if err := checkPlanFlags(cmd, md, f, haveGPU); err != nil {
		return err
	}
	var res *estimate.Result
	var fit *estimate.Fit
	if haveGPU {
		res, fit, err = estimate.PlanWith(md, f.opts, g, margin, f.planRequest())
		if err == nil && f.gpuMemory != "" {
			fit.GPUMemoryUnit = memoryUnit(f.gpuMemory)
		}
	} else {
		res, err = estimate.Estimate(md, f.opts)
	}
	if err != nil {
		return err
	}
	t := estimateCatalog.T(env.lang())
	if !haveGPU && res.CachedFreeBytes > res.PeakAllocatedBytes {
		fmt.Fprintln(env.Stderr, t("estimate.notice.cachedFree", units.Bytes(res.CachedFreeBytes)))
	}
	if v := estimate.OlderLossVersion(md, f.opts); v != "" {
		fmt.Fprintln(env.Stderr, t("estimate.notice.olderLoss", termsafe.Line(v)))
	}
	if f.json {
		err = writeJSON(env.Stdout, struct {
			*estimate.Result
			*estimate.Fit
		}{res, fit})
	} else {
		err = printEstimate(env, res, fit)
		if err == nil {
			printPlanSection(env, res, fit)
		}
	}
	if err == nil && fit != nil && !fit.Fits {
		return &ExitError{Code: 2}
	}
	return err
}

func estimateModel(f *estimateFlags) (*models.Model, error) {
	n := 0
	for _, s := range []string{f.config, f.safetensors, f.model} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return nil, errors.New("give exactly one of --config FILE, --safetensors FILE or --model NAME (see --list-models)")
	}
	switch {
	case f.config != "":
		return models.LoadConfig(f.config)
	case f.safetensors != "":
		m, _, err := models.FromSafetensors(f.safetensors)
		return m, err
	}
	return models.Preset(f.model)
}

// estimateHead applies --head to a language model's head.
func estimateHead(md *models.Model, f *estimateFlags) error {
	switch f.head {
	case "":
		return nil
	case "lm", "classification":
	default:
		return fmt.Errorf("--head %q: want lm or classification", f.head)
	}
	if !estimate.ClassifierHead(md) {
		return fmt.Errorf("--head applies to BERT, GPT-2 and Llama-style models, not %s", md.Family)
	}
	if f.numLabels < 1 || f.numLabels > 1<<20 {
		return fmt.Errorf("--num-labels %d out of range", f.numLabels)
	}
	md.SeqClassification = f.head == "classification"
	if md.SeqClassification {
		md.Classes = f.numLabels
	}
	return nil
}

// estimateGPU resolves --gpu / --gpu-memory; false when neither was given.
func estimateGPU(env *Env, f *estimateFlags) (estimate.GPU, bool, error) {
	switch {
	case f.gpu != "" && f.gpuMemory != "":
		return estimate.GPU{}, false, errors.New("give --gpu or --gpu-memory, not both")
	case f.gpuMemory != "":
		n, err := units.ParseBytes(f.gpuMemory)
		if err != nil || n <= 0 || n > 1<<50 {
			return estimate.GPU{}, false, fmt.Errorf("--gpu-memory %q: want a size such as 24GiB", f.gpuMemory)
		}
		return estimate.GPU{Name: strings.TrimSpace(f.gpuMemory), MemoryBytes: n}, true, nil
	case strings.EqualFold(f.gpu, "auto"):
		return estimateLocalGPU(env)
	case f.gpu != "":
		g, err := estimate.LookupGPU(f.gpu)
		return g, err == nil, err
	}
	return estimate.GPU{}, false, nil
}

// estimateLocalGPU reads the first GPU of this host through the GPU source.
func estimateLocalGPU(env *Env) (estimate.GPU, bool, error) {
	b, notice := gpu.Open(gpu.Options{SysRoot: env.SysRoot, ProcRoot: env.ProcRoot})
	defer b.Close()
	devs, err := b.Devices()
	if err != nil || len(devs) == 0 {
		why := notice
		if err != nil {
			why = err.Error()
		}
		if why == "" {
			why = "the GPU source lists no device"
		}
		return estimate.GPU{}, false, fmt.Errorf("--gpu auto: no GPU detected (%s); give --gpu NAME or --gpu-memory SIZE", why)
	}
	d := devs[0]
	g := estimate.GPU{Name: d.Name, MemoryBytes: d.TotalBytes}
	if known, err := estimate.LookupGPU(d.Name); err == nil {
		g.ComputeCapability = known.ComputeCapability
	}
	return g, true, nil
}

func estimateLists(env *Env, f *estimateFlags) error {
	if f.listModels {
		for _, n := range models.PresetNames() {
			fmt.Fprintln(env.Stdout, n)
		}
	}
	if f.listGPUs {
		tw := newTable(env.Stdout)
		for _, n := range estimate.GPUNames() {
			g, _ := estimate.LookupGPU(n)
			fmt.Fprintf(tw, "%s\t%s\tsm%d\n", g.Name, units.Bytes(g.MemoryBytes), g.ComputeCapability)
		}
		return tw.Flush()
	}
	return nil
}
