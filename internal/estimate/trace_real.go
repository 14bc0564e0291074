package estimate

import "fmt"

// What estimate --trace --real needs from the estimator: the phase words
// of a trace, and the fit of figures measured on a GPU instead of replayed.

// TracePhaseName is the phase of a trace ("forward", "backward",
// "optimizer", ... as the tracers write them) and its step in the words of
// the estimate report ("backward, step 2"): the measured run names the
// phase of its peak as the predicted one does.
func TracePhaseName(phase string, step int) string { return phaseName(phase, step) }

// FitMeasured says whether a run measured on a GPU fits gpu with margin:
// its process bytes (nvidia-smi's figure, measured or modelled) against
// the budget, the rule of every other fit. A run that hit a CUDA OOM does
// not fit.
func FitMeasured(r *Result, gpu GPU, margin float64) (*Fit, error) {
	if margin < 0 || margin >= 1 {
		return nil, fmt.Errorf("--margin %.2f: want a fraction in [0, 1)", margin)
	}
	budget := int64(float64(gpu.MemoryBytes) * (1 - margin))
	return &Fit{GPU: gpu.Name, GPUMemoryBytes: gpu.MemoryBytes, Margin: margin, BudgetBytes: budget,
		Fits: fitsIn(r, budget), HeadroomBytes: budget - r.ProcessBytes}, nil
}
