package cli

import (
	"fmt"
	"strings"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/textwrap"
	"github.com/torchmem/torchmem/internal/units"
)

func printEstimate(env *Env, r *estimate.Result, f *estimate.Fit) error {
	w := env.Stdout
	// Model and setup on two lines, and the phase of the peak outside the
	// table (it is longer than any size), keep the text within 80 columns.
	fmt.Fprintf(w, "%s (%s, %.1fM parameters)\n  %s\n", r.Model, r.Family, float64(r.Params)/1e6, estimateSetup(r.Opts, r.Family))
	rows := [][2]string{
		{"peak allocated", units.Bytes(r.PeakAllocatedBytes) + "\ttorch.cuda.max_memory_allocated()"},
		{"peak reserved", units.Bytes(r.PeakReservedBytes) + "\ttorch.cuda.max_memory_reserved()"},
		{"process", units.Bytes(r.ProcessBytes) + "\tnvidia-smi (reserved + context + libraries)"},
	}
	if r.ActivationBytesPerBlock > 0 {
		rows = append(rows, [2]string{"activations per block", units.Bytes(r.ActivationBytesPerBlock) + "\tkept for backward by one block"})
	}
	tw := newTable(w)
	label := 0
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
		label = max(label, len(row[0]))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%-*s%s\n", label+2, "peak at", r.PeakPhase)
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
		if o.DDP {
			ddp := "DDP"
			if o.DDPBucketView {
				ddp += " (gradients as bucket views)"
			}
			parts = append(parts, ddp)
		}
	}
	if family != "resnet" { // a ConvNet has no attention to name
		parts = append(parts, o.Attention+" attention")
	}
	return strings.Join(parts, ", ")
}

func printFit(w interface{ Write([]byte) (int, error) }, r *estimate.Result, f *estimate.Fit) {
	verdict := fmt.Sprintf("fits, %s to spare", units.Bytes(f.HeadroomBytes))
	switch {
	case r.OOM:
		verdict = fmt.Sprintf("DOES NOT FIT: %s over; CUDA out of memory\n"+
			"even after the allocator frees its cache", units.Bytes(-f.HeadroomBytes))
	case !f.Fits:
		verdict = fmt.Sprintf("DOES NOT FIT: %s over", units.Bytes(-f.HeadroomBytes))
	}
	fmt.Fprintf(w, "\nGPU %s: %s, budget %s with a %.0f%% margin\n%s\n", f.GPU, units.Bytes(f.GPUMemoryBytes),
		units.Bytes(f.BudgetBytes), 100*f.Margin, verdict)
	for _, n := range f.Notes {
		fmt.Fprintln(w, textwrap.Wrap("note: ", n, textwrap.Width))
	}
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
		// The flags only: the parenthesised explanation is in --json, and
		// without it a row fits 80 columns.
		flags, _, _ := strings.Cut(l.Change, " (")
		fmt.Fprintf(tw, "  %s\t-%s\t-> %s\t%s\t%s\n", l.Lever, units.Bytes(l.SavedBytes), units.Bytes(l.ProcessBytes), fits, flags)
	}
	_ = tw.Flush()
}
