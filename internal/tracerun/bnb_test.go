package tracerun

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
)

// bnbPython: a python with torch >= 2.4 and bitsandbytes >= 0.46 (its ops
// declared with fake kernels; taken from PYTHONPATH as the environment
// gives it, the native library not needed); the tests skip without one
// (CI has none: bitsandbytes comes from PyPI).
func bnbPython(t *testing.T) string {
	t.Helper()
	py := torch2Python(t)
	if !torchAtLeast(py, 2, 4) {
		t.Skip("the bitsandbytes tests need torch 2.4 or later")
	}
	if exec.Command(py, "-c", "import bitsandbytes, torch.library; torch.library.register_fake").Run() != nil {
		t.Skip("bitsandbytes (0.46 or later) is not importable by " + py + ": the bitsandbytes tests need it")
	}
	return py
}

// TestBitsAndBytes: bitsandbytes' own Linear4bit and 8-bit optimizers run
// on the trace's tensors as their fake kernels. The 4-bit weights are
// "param4" (2 × 1024 × 4096 parameters in 4 MiB), their absmax "buffer"; PagedAdamW8bit's two
// one-byte states of the 1,048,576-element adapter (2 MiB) are outside
// the allocator, in the process's figure; AdamW8bit's are in it.
func TestBitsAndBytes(t *testing.T) {
	py := bnbPython(t)
	const adapter, weights4 = 1024 * 1024, 2 * 1024 * 4096
	for _, mode := range []string{"paged", "plain", "int8"} {
		var out strings.Builder
		tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", "bnb_qlora.py"), mode},
			Steps: 2, Output: &out})
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out.String())
		}
		if tr.End == nil || tr.End.Kind != "steps" {
			t.Fatalf("%s: end %+v, want 2 steps\n%s", mode, tr.End, out.String())
		}
		r := estimate.ReplayTrace(tr, estimate.TraceReplay{ComputeCapability: 90})
		if mode == "int8" {
			checkInt8(t, tr, r, adapter)
			continue
		}
		if r.Params != weights4+adapter || r.TrainableParams != adapter {
			t.Errorf("%s: %d parameters (%d trainable), want %d (%d)", mode, r.Params, r.TrainableParams,
				weights4+adapter, adapter)
		}
		if n, _ := kindBytes(tr, "param4", 0); n != weights4/2 {
			t.Errorf("%s: 4-bit weights %d bytes, want %d", mode, n, weights4/2)
		}
		// their quantization constants (an absmax byte per 64 values, with
		// compress_statistics) count with the weights, not as temporaries
		if n, _ := kindBytes(tr, "buffer", 0); n < weights4/64 {
			t.Errorf("%s: quantization constants %d bytes as weights, want %d or more", mode, n, weights4/64)
		}
		var paged int64
		for _, it := range r.Breakdown {
			if it.Name == "paged_optimizer_states" {
				paged = it.Bytes
			}
		}
		states, found := kindBytes(tr, "optstate", 2*adapter)
		switch {
		case mode == "paged" && (paged != 2*adapter || states >= adapter):
			t.Errorf("paged: %d bytes paged, %d in the allocator; want %d paged", paged, states, 2*adapter)
		case mode == "plain" && (paged != 0 || !found && states < 2*adapter):
			t.Errorf("plain: %d bytes paged, %d in the allocator; want 0 paged", paged, states)
		}
	}
}

// checkInt8: the LLM.int8 layer's weight is one byte a parameter, made by
// bitsandbytes' own int8_vectorwise_quant from the host copy transformers
// takes; the outliers its threshold holds back are said once.
func checkInt8(t *testing.T, tr *estimate.Trace, r *estimate.TraceResult, adapter int64) {
	t.Helper()
	const w4, w8 = 1024 * 4096, 4096 * 1024
	if r.Params != w4+w8+adapter {
		t.Errorf("int8: %d parameters, want %d", r.Params, w4+w8+adapter)
	}
	said := 0
	for _, w := range tr.Warnings {
		if w.Kind == "int8outliers" {
			said++
		}
	}
	if said != 1 {
		t.Errorf("int8: %d notes of the outliers, want 1: %+v", said, tr.Warnings)
	}
}
