package cli

import (
	"fmt"
	"strings"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/units"
)

func printEstimate(env *Env, r *estimate.Result, f *estimate.Fit) error {
	w := env.Stdout
	fmt.Fprintf(w, "%s (%s, %.1fM parameters): %s\n", r.Model, r.Family, float64(r.Params)/1e6, estimateSetup(r.Opts, r.Family))
	tw := newTable(w)
	fmt.Fprintf(tw, "peak allocated\t%s\ttorch.cuda.max_memory_allocated()\n", units.Bytes(r.PeakAllocatedBytes))
	fmt.Fprintf(tw, "peak reserved\t%s\ttorch.cuda.max_memory_reserved(): allocator segments\n", units.Bytes(r.PeakReservedBytes))
	fmt.Fprintf(tw, "process\t%s\tnvidia-smi: reserved + CUDA context + library state\n", units.Bytes(r.ProcessBytes))
	fmt.Fprintf(tw, "peak at\t%s\t\n", r.PeakPhase)
	if r.ActivationBytesPerBlock > 0 {
		fmt.Fprintf(tw, "activations per block\t%s\tkept for backward by one block\n", units.Bytes(r.ActivationBytesPerBlock))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nbreakdown at the peak:")
	tw = newTable(w)
	for _, it := range r.Breakdown {
		fmt.Fprintf(tw, "  %s\t%s\n", strings.ReplaceAll(it.Name, "_", " "), units.Bytes(it.Bytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if f != nil {
		printFit(w, r, f)
	}
	return nil
}

func estimateSetup(o estimate.Options, family string) string {
	var parts []string
	if o.Seq > 0 {
		parts = append(parts, fmt.Sprintf("batch %d x seq %d", o.Batch, o.Seq))
	} else {
		parts = append(parts, fmt.Sprintf("batch %d x %dpx", o.Batch, o.ImageSize))
	}
	parts = append(parts, o.Precision)
	if o.Inference {
		mode := "inference"
		if o.GenLen > 0 {
			mode += fmt.Sprintf(", generating %d tokens", o.GenLen)
		} else if o.KVCache {
			mode += " with KV cache"
		}
		parts = append(parts, mode)
	} else {
		parts = append(parts, fmt.Sprintf("%s (%s)", o.Optimizer, o.OptimizerImpl))
		if o.Accum > 1 {
			parts = append(parts, fmt.Sprintf("accum %d", o.Accum))
		}
		if o.Checkpointing {
			parts = append(parts, "checkpointing")
		}
		if o.ZeroStage > 0 {
			parts = append(parts, fmt.Sprintf("ZeRO-%d over %d GPUs", o.ZeroStage, o.WorldSize))
		}
	}
	if family != "resnet" { // a ConvNet has no attention to name
		parts = append(parts, o.Attention+" attention")
	}
	return strings.Join(parts, ", ")
}

func printFit(w interface{ Write([]byte) (int, error) }, r *estimate.Result, f *estimate.Fit) {
	verdict := fmt.Sprintf("fits, %s to spare", units.Bytes(f.HeadroomBytes))
	if !f.Fits {
		verdict = fmt.Sprintf("DOES NOT FIT: %s over", units.Bytes(-f.HeadroomBytes))
	}
	fmt.Fprintf(w, "\nGPU %s (%s, budget %s with a %.0f%% margin): %s\n", f.GPU, units.Bytes(f.GPUMemoryBytes),
		units.Bytes(f.BudgetBytes), 100*f.Margin, verdict)
	if f.MaxBatchAtLimit {
		fmt.Fprintf(w, "largest batch that fits: %d or more (the search stops there)\n", f.MaxBatch)
	} else if f.MaxBatch > 0 {
		fmt.Fprintf(w, "largest batch that fits: %d\n", f.MaxBatch)
	} else {
		fmt.Fprintln(w, "largest batch that fits: none (not even batch 1)")
	}
	if len(f.Levers) == 0 {
		return
	}
	fmt.Fprintln(w, "\nlevers, by memory saved:")
	tw := newTable(w)
	for _, l := range f.Levers {
		fits := ""
		if l.Fits {
			fits = "fits"
		}
		fmt.Fprintf(tw, "  %s\t-%s\t-> %s\t%s\t%s\n", l.Lever, units.Bytes(l.SavedBytes), units.Bytes(l.ProcessBytes), fits, l.Change)
	}
	_ = tw.Flush()
	_ = r
}
