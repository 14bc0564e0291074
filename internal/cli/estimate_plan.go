package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/estimate/models"
	"github.com/torchmem/torchmem/internal/textwrap"
	"github.com/torchmem/torchmem/internal/units"
)

// The estimate flags for multi-GPU layouts, mixture-of-experts capacity
// and the plan search, and their output: the plan's combinations, the
// effective batch, the unit --gpu-memory was read in, an MoE model's
// active parameters.

// planFlags are the flags the plan search reads.
type planFlags struct {
	gpus     int
	plan     bool
	fineTune bool
}

func addPlanFlags(fl *pflag.FlagSet, f *estimateFlags) {
	fl.IntVar(&f.opts.TP, "tp", 1, "tensor-parallel degree (Megatron layout: heads, MLP and vocabulary split over TP GPUs; Llama-style and MoE models)")
	fl.BoolVar(&f.opts.SequenceParallel, "sequence-parallel", false, "with --tp: split the residual stream's activations by the sequence too")
	fl.Float64Var(&f.opts.ExpertCapacity, "expert-capacity", 0, "MoE: pad every expert to this capacity factor (GShard/Switch style); 0: dropless, as transformers runs")
	fl.IntVar(&f.plan.gpus, "gpus", 0, "GPUs the job may use: the plan may spread it over them (default: --world-size; multi-GPU layouts are never proposed unless more than one GPU is stated)")
	fl.BoolVar(&f.plan.plan, "plan", false, "search combinations of levers that fit even when the job fits as given (the search runs anyway when it does not fit)")
	fl.BoolVar(&f.plan.fineTune, "fine-tune", false, "the job fine-tunes a pretrained model: the plan may propose LoRA and QLoRA")
}

// checkPlanFlags refuses what the estimate would otherwise ignore.
func checkPlanFlags(cmd *cobra.Command, md *models.Model, f *estimateFlags, haveGPU bool) error {
	fl := cmd.Flags()
	switch {
	case fl.Changed("gpus") && (f.plan.gpus < 1 || f.plan.gpus > 1<<16):
		return fmt.Errorf("--gpus %d: want 1 or more", f.plan.gpus)
	case fl.Changed("tp") && f.opts.TP < 1:
		return fmt.Errorf("--tp %d: want 1 or more", f.opts.TP)
	case fl.Changed("expert-capacity") && md.MoE == nil:
		return fmt.Errorf("--expert-capacity applies to mixture-of-experts models; %s is dense", md.Name)
	case (f.plan.plan || fl.Changed("gpus") || f.plan.fineTune) && !haveGPU:
		return errors.New("--plan, --gpus and --fine-tune search what fits a GPU: give --gpu or --gpu-memory")
	case fl.Changed("gpus") && f.opts.WorldSize > f.plan.gpus:
		return fmt.Errorf("--world-size %d is more than the %d GPUs of --gpus", f.opts.WorldSize, f.plan.gpus)
	}
	return nil
}

func (f *estimateFlags) planRequest() estimate.PlanRequest {
	return estimate.PlanRequest{GPUs: f.plan.gpus, FineTune: f.plan.fineTune, Always: f.plan.plan}
}

// memoryUnit is the unit a --gpu-memory size was written in: "80GB" is
// decimal (80·10^9 bytes, 74.5 GiB), "80GiB" binary (units.ParseBytes).
func memoryUnit(flag string) string {
	s := strings.ToLower(strings.TrimSpace(flag))
	switch {
	case strings.HasSuffix(s, "ib"):
		return estimate.UnitBinary
	case strings.HasSuffix(s, "b") && len(s) > 1 && s[len(s)-2] >= 'a' && s[len(s)-2] <= 'z':
		return estimate.UnitDecimal
	}
	return estimate.UnitBytes
}

// printPlanSection follows the fit: the unit --gpu-memory was read in
// and the plan.
func printPlanSection(env *Env, r *estimate.Result, f *estimate.Fit) {
	if f == nil {
		return
	}
	w, t := env.Stdout, estimateCatalog.T(env.lang())
	if f.GPUMemoryUnit != "" {
		fmt.Fprintln(w)
	}
	switch f.GPUMemoryUnit {
	case estimate.UnitDecimal:
		fmt.Fprintln(w, t("estimate.gpuMemory.decimal", f.GPU, strconv.FormatInt(f.GPUMemoryBytes, 10), units.Bytes(f.GPUMemoryBytes)))
	case estimate.UnitBinary:
		fmt.Fprintln(w, t("estimate.gpuMemory.binary", f.GPU, strconv.FormatInt(f.GPUMemoryBytes, 10)))
	case estimate.UnitBytes:
		fmt.Fprintln(w, t("estimate.gpuMemory.bytes", f.GPU))
	}
	printPlan(env, r, f)
}

// effectiveBatch says whether --batch is per step or per optimizer step:
// "batch 8 × accum 4 = 32 per optimizer step" (× data-parallel GPUs).
func effectiveBatch(t tr, o estimate.Options) string {
	dp := 1
	if o.WorldSize > 1 && !o.Inference {
		dp = o.WorldSize / max(1, o.TP)
	}
	if o.Inference {
		return t("estimate.batch.inference", itoa(o.Batch))
	}
	if dp > 1 {
		return t("estimate.batch.dp", itoa(o.Batch), itoa(o.Accum), itoa(dp), itoa(o.Batch*o.Accum*dp))
	}
	return t("estimate.batch.accum", itoa(o.Batch), itoa(o.Accum), itoa(o.Batch*o.Accum))
}

// moeRows is a mixture-of-experts model's active parameters.
func moeRows(t tr, r *estimate.Result) [][2]string {
	if r.ActiveParams == 0 || r.ActiveParams == r.Params {
		return nil
	}
	return [][2]string{{t("estimate.row.active"), fmt.Sprintf("%.2fB", float64(r.ActiveParams)/1e9) + "\t" +
		t("estimate.note.active", fmt.Sprintf("%.2fB", float64(r.Params)/1e9))}}
}

// printPlan shows the plan search's combinations.
func printPlan(env *Env, r *estimate.Result, f *estimate.Fit) {
	if f == nil || f.Plan == nil {
		return
	}
	w, t := env.Stdout, estimateCatalog.T(env.lang())
	p := f.Plan
	if len(p.Combinations) == 0 {
		fmt.Fprintln(w, "\n"+t("estimate.plan.none", itoa(p.Estimated)))
		return
	}
	header, model := "estimate.plan.header", "estimate.plan.model"
	if r.Opts.Inference {
		header, model = "estimate.plan.headerInference", "estimate.plan.modelInference"
	}
	fmt.Fprintln(w, "\n"+textwrap.Wrap("", t(header, itoa(p.EffectiveBatch)), textwrap.Width))
	// Each combination: its time and memory, then its flags (wrapped:
	// a multi-GPU layout's flags alone can pass 80 columns).
	for i, c := range p.Combinations {
		fmt.Fprintln(w, t("estimate.plan.row", itoa(i+1), strconv.FormatFloat(c.Cost, 'f', 2, 64), units.Bytes(c.ProcessBytes)))
		fmt.Fprintln(w, textwrap.Wrap("     ", c.Flags, textwrap.Width))
	}
	fmt.Fprintln(w, textwrap.Wrap("", t(model, itoa(p.Estimated)), textwrap.Width))
}

// The catalog entries of this file, merged into the estimate catalog
// (estimate_msgs_en.go, estimate_msgs_zh.go) before its first use.
var estimatePlanEN = map[string]string{
	"estimate.gpuMemory.decimal":    "--gpu-memory %[1]s is decimal (GB = 10^9 bytes): %[2]s bytes = %[3]s",
	"estimate.gpuMemory.binary":     "--gpu-memory %[1]s is binary (GiB = 2^30 bytes): %[2]s bytes",
	"estimate.gpuMemory.bytes":      "--gpu-memory %[1]s is in bytes",
	"estimate.batch.accum":          "batch %[1]s × accum %[2]s = %[3]s per optimizer step",
	"estimate.batch.dp":             "batch %[1]s × accum %[2]s × %[3]s data-parallel GPUs = %[4]s per optimizer step",
	"estimate.batch.inference":      "batch %[1]s per forward",
	"estimate.row.active":           "active parameters",
	"estimate.note.active":          "per token, of %[1]s (routed experts not chosen are idle)",
	"estimate.plan.header":          "plan: combinations that fit, fastest first (same %[1]s samples per optimizer step):",
	"estimate.plan.none":            "plan: no combination of the levers fits (%[1]s configurations estimated)",
	"estimate.plan.headerInference": "plan: combinations that fit, fastest first (the same batch of %[1]s):",
	"estimate.plan.modelInference":  "time: one forward pass against the job as given = 1.00, by the cost model in docs/estimate.md (%[1]s configurations estimated)",
	"estimate.plan.row":             "  %[1]s. time %[2]s, %[3]s per GPU",
	"estimate.plan.model":           "time: one optimizer step against the job as given = 1.00, by the cost model in docs/estimate.md (%[1]s configurations estimated)",
}

var estimatePlanZH = map[string]string{
	"estimate.gpuMemory.decimal":    "--gpu-memory %[1]s 按十进制计（GB = 10^9 字节）：%[2]s 字节 = %[3]s",
	"estimate.gpuMemory.binary":     "--gpu-memory %[1]s 按二进制计（GiB = 2^30 字节）：%[2]s 字节",
	"estimate.gpuMemory.bytes":      "--gpu-memory %[1]s 以字节计",
	"estimate.batch.accum":          "批次 %[1]s × 累积 %[2]s = 每个优化器步 %[3]s 个样本",
	"estimate.batch.dp":             "批次 %[1]s × 累积 %[2]s × %[3]s 个数据并行 GPU = 每个优化器步 %[4]s 个样本",
	"estimate.batch.inference":      "每次前向批次 %[1]s",
	"estimate.row.active":           "激活参数",
	"estimate.note.active":          "每个词元，共 %[1]s（未被选中的路由专家不参与计算）",
	"estimate.plan.header":          "方案：能放下的组合，按速度排序（每个优化器步同为 %[1]s 个样本）：",
	"estimate.plan.none":            "方案：没有能放下的杠杆组合（已估算 %[1]s 个配置）",
	"estimate.plan.headerInference": "方案：能放下的组合，按速度排序（批次同为 %[1]s）：",
	"estimate.plan.modelInference":  "时间：相对原任务一次前向 = 1.00，按 docs/estimate.md 中的代价模型（已估算 %[1]s 个配置）",
	"estimate.plan.row":             "  %[1]s. 时间 %[2]s，每 GPU %[3]s",
	"estimate.plan.model":           "时间：相对原任务一个优化器步 = 1.00，按 docs/estimate.md 中的代价模型（已估算 %[1]s 个配置）",
}

func init() {
	for k, v := range estimatePlanEN {
		estimateEN[k] = v
	}
	for k, v := range estimatePlanZH {
		estimateZH[k] = v
	}
}
