// Command estimate compares torchmem's estimator with two rules of thumb on
// measured configurations (a calibration.jsonl as in the estimator's
// testdata): Hugging Face accelerate's `estimate-memory` (training with Adam
// = 4x the model's size in its dtype; inference = the model's size) and the
// plain 16 bytes per parameter for Adam training. It prints a Markdown
// table of each against the measured torch.cuda.max_memory_allocated().
// With -one-process the rows are replayed one after another in one process,
// as a harness that measured them so did (the H200 capture in the
// estimator's testdata); without it each row is a fresh process, as
// bench/device/estimate_measure.py measures them.
//
//	go run ./bench/estimate -one-process internal/estimate/testdata/calibration.jsonl
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/torchmem/torchmem/internal/estimate"
)

func main() {
	one := flag.Bool("one-process", false, "the rows were measured one after another in one process")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: estimate [-one-process] CALIBRATION.jsonl")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *one); err != nil {
		fmt.Fprintln(os.Stderr, "estimate:", err)
		os.Exit(1)
	}
}

func run(path string, oneProcess bool) error {
	rows, err := estimate.ReadCalibration(path)
	if err != nil {
		return err
	}
	results, err := estimateAll(rows, oneProcess)
	if err != nil {
		return err
	}
	fmt.Println("| configuration | measured peak allocated | torchmem | accelerate rule | 16 B/param rule | measured nvidia-smi | torchmem process |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	var errs [3][]float64
	for i, r := range rows {
		if r.PeakAllocated <= 0 {
			fmt.Fprintf(os.Stderr, "estimate: %s: no measured peak (a dry run?), left out\n", r.ID)
			continue
		}
		res := results[i]
		// accelerate: model size in the training dtype x4 with Adam, x1 for
		// inference (it reports the largest layer on top; ignored here).
		o, err := r.Options()
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		acc := r.ModelStateBytes * 4
		rule := 16 * r.Params
		if o.Inference {
			acc, rule = r.ModelStateBytes, 2*r.Params
		} else if o.Optimizer == "sgd-momentum" {
			rule = 12 * r.Params // weights, grads, momentum
		}
		vals := [3]int64{res.PeakAllocatedBytes, acc, rule}
		cells := [3]string{}
		for i, v := range vals {
			e := float64(v-r.PeakAllocated) / float64(r.PeakAllocated)
			errs[i] = append(errs[i], math.Abs(e))
			cells[i] = fmt.Sprintf("%.2f GB (%+.0f%%)", float64(v)/1e9, 100*e)
		}
		smi, proc := "n/a", fmt.Sprintf("%.2f GB", float64(res.ProcessBytes)/1e9)
		if r.NVMLProcessUsed > 0 { // a row measured without NVML has no nvidia-smi figure
			pe := float64(res.ProcessBytes-r.NVMLProcessUsed) / float64(r.NVMLProcessUsed)
			smi, proc = fmt.Sprintf("%.2f GB", float64(r.NVMLProcessUsed)/1e9), fmt.Sprintf("%s (%+.1f%%)", proc, 100*pe)
		}
		fmt.Printf("| %s | %.2f GB | %s | %s | %s | %s | %s |\n", r.ID, float64(r.PeakAllocated)/1e9,
			cells[0], cells[1], cells[2], smi, proc)
	}
	fmt.Printf("| **median abs. error** | | **%.1f%%** | %.1f%% | %.1f%% | | |\n", 100*median(errs[0]), 100*median(errs[1]), 100*median(errs[2]))
	return nil
}

// estimateAll estimates every row, each in a fresh process or all in one.
func estimateAll(rows []estimate.Measured, oneProcess bool) ([]*estimate.Result, error) {
	if oneProcess {
		return estimate.EstimateOneProcess(rows)
	}
	out := make([]*estimate.Result, len(rows))
	for i, r := range rows {
		res, err := r.Estimate()
		if err != nil {
			return nil, err
		}
		out[i] = res
	}
	return out, nil
}

func median(x []float64) float64 {
	sort.Float64s(x)
	n := len(x)
	if n == 0 {
		return 0
	}
	return (x[n/2] + x[(n-1)/2]) / 2
}
