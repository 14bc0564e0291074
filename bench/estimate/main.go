// Command estimate compares torchmem's estimator with two rules of thumb on
// measured configurations (a calibration.jsonl as in the estimator's
// testdata): Hugging Face accelerate's `estimate-memory` (training with Adam
// = 4x the model's size in its dtype; inference = the model's size) and the
// plain 16 bytes per parameter for Adam training. It prints a Markdown
// table of each against the measured torch.cuda.max_memory_allocated().
//
//	go run ./bench/estimate internal/estimate/testdata/calibration.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/estimate/models"
)

type row struct {
	ID              string         `json:"id"`
	Batch           int            `json:"batch"`
	Seq             int            `json:"seq"`
	Precision       string         `json:"precision"`
	Optim           *string        `json:"optim"`
	Mode            string         `json:"mode"`
	Params          int64          `json:"params"`
	ModelStateBytes int64          `json:"model_state_bytes"`
	PeakAllocated   int64          `json:"peak_allocated"`
	NVMLProcessUsed int64          `json:"nvml_process_used"`
	ModelConfig     map[string]any `json:"model_config"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: estimate CALIBRATION.jsonl")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "estimate:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fmt.Println("| configuration | measured peak allocated | torchmem | accelerate rule | 16 B/param rule | measured nvidia-smi | torchmem process |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	var errs [3][]float64
	for sc.Scan() {
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return err
		}
		if r.ID == "_context" {
			continue
		}
		md, err := models.FromConfigMap(r.ModelConfig)
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		o := estimate.Options{Batch: r.Batch, Seq: r.Seq, Precision: r.Precision, Inference: r.Mode == "infer"}
		if r.Optim != nil {
			o.Optimizer = *r.Optim
		}
		res, err := estimate.Estimate(md, o)
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		// accelerate: model size in the training dtype x4 with Adam, x1 for
		// inference (it reports the largest layer on top; ignored here).
		acc := r.ModelStateBytes * 4
		rule := 16 * r.Params
		if r.Mode == "infer" {
			acc, rule = r.ModelStateBytes, 2*r.Params
		} else if r.Optim != nil && *r.Optim == "sgd-momentum" {
			rule = 12 * r.Params // weights, grads, momentum
		}
		vals := [3]int64{res.PeakAllocatedBytes, acc, rule}
		cells := [3]string{}
		for i, v := range vals {
			e := float64(v-r.PeakAllocated) / float64(r.PeakAllocated)
			errs[i] = append(errs[i], math.Abs(e))
			cells[i] = fmt.Sprintf("%.2f GB (%+.0f%%)", float64(v)/1e9, 100*e)
		}
		pe := float64(res.ProcessBytes-r.NVMLProcessUsed) / float64(r.NVMLProcessUsed)
		fmt.Printf("| %s | %.2f GB | %s | %s | %s | %.2f GB | %.2f GB (%+.1f%%) |\n", r.ID, float64(r.PeakAllocated)/1e9,
			cells[0], cells[1], cells[2], float64(r.NVMLProcessUsed)/1e9, float64(res.ProcessBytes)/1e9, 100*pe)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Printf("| **median abs. error** | | **%.1f%%** | %.1f%% | %.1f%% | | |\n", 100*median(errs[0]), 100*median(errs[1]), 100*median(errs[2]))
	return nil
}

func median(x []float64) float64 {
	sort.Float64s(x)
	n := len(x)
	if n == 0 {
		return 0
	}
	return (x[n/2] + x[(n-1)/2]) / 2
}
