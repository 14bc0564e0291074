// Command tracecal traces, on the meta device, each job of a calibration
// file (bench/trace/calibration_job.py writes a row's job as a training
// script) and compares the prediction with what the GPU measured: as a
// fresh process (what `torchmem estimate --trace` reports, what a user's
// job is) and replayed one job after another in one process, as the
// harness that measured the H200 capture ran them (rows in file order;
// see estimate.ReplayTracesOneProcess). It prints a Markdown table.
//
//	PYTHONPATH=<transformers> go run ./bench/tracecal -python python3 internal/estimate/testdata/calibration.jsonl
//
// Needs a Python with torch 2.x, transformers and torchvision; no GPU.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/tracerun"
)

func main() {
	py := flag.String("python", "python3", "the Python that runs the jobs")
	script := flag.String("script", filepath.Join("bench", "trace", "calibration_job.py"), "the job script")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: tracecal [-python PY] [-script calibration_job.py] CALIBRATION.jsonl")
		os.Exit(2)
	}
	if err := run(*py, *script, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "tracecal:", err)
		os.Exit(1)
	}
}

func run(py, script, path string) error {
	rows, err := estimate.ReadCalibration(path)
	if err != nil {
		return err
	}
	var traces []*estimate.Trace
	for _, r := range rows {
		t, err := tracerun.Run(context.Background(), tracerun.Options{Argv: []string{py, script, path, r.ID},
			Steps: 3, GPUName: "H200", GPUCC: 90, Output: io.Discard})
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		if t.End == nil || (t.End.Kind != "steps" && t.End.Kind != "exit") {
			return fmt.Errorf("%s: the trace stopped: %+v", r.ID, t.End)
		}
		traces = append(traces, t)
	}
	o := estimate.TraceReplay{ComputeCapability: 90}
	warm := estimate.ReplayTracesOneProcess(traces, o)
	fmt.Println("| row | measured allocated | fresh process | one process | measured reserved | fresh process | one process | measured nvidia-smi | one process |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, r := range rows {
		fresh := estimate.ReplayTrace(traces[i], o).Result
		w := warm[i]
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.ID,
			gb(r.PeakAllocated), pct(fresh.PeakAllocatedBytes, r.PeakAllocated), pct(w.PeakAllocatedBytes, r.PeakAllocated),
			gb(r.PeakReserved), pct(fresh.PeakReservedBytes, r.PeakReserved), pct(w.PeakReservedBytes, r.PeakReserved),
			gb(r.NVMLProcessUsed), pct(w.ProcessBytes, r.NVMLProcessUsed))
	}
	return nil
}

func gb(b int64) string { return fmt.Sprintf("%.3f GB", float64(b)/1e9) }

// pct is a predicted figure with its error against the measured one.
func pct(got, want int64) string {
	return fmt.Sprintf("%.3f GB (%+.2f %%)", float64(got)/1e9, 100*(float64(got)/float64(want)-1))
}
