package tracerun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
)

// torch2Root is where scripts/torch2-root.sh puts a Debian 13 root with
// python3-torch 2.6 (CPU) and the host-python3 wrapper that runs it here
// (relative to this package; .cache is git-ignored).
const torch2Root = "../../.cache/torch2-root/host-python3"

// torch2Python is a python3 with torch >= 2.0: $TORCHMEM_TORCH2_PYTHON, the
// repository's .cache/torch2-root, or the torch-1.13 python's own torch if
// it is a 2.x. Tests that need it skip otherwise.
func torch2Python(t *testing.T) string {
	t.Helper()
	skipShort(t)
	for _, p := range []string{os.Getenv("TORCHMEM_TORCH2_PYTHON"), torch2Root, os.Getenv("TORCHMEM_TORCH_PYTHON"), "/usr/bin/python3"} {
		if p == "" {
			continue
		}
		if exec.Command(p, "-c", "import sys, torch; sys.exit(int(torch.__version__.split('.')[0]) < 2)").Run() == nil {
			return p
		}
	}
	t.Skip("no python3 with torch >= 2.0: set TORCHMEM_TORCH2_PYTHON, or run " +
		"`bash scripts/torch2-root.sh .cache/torch2-root` (Debian 13's torch 2.6, ~1.4 GB)")
	return ""
}

// TestTorch2 runs the tracer's agreement tests on torch 2.x (Debian 13's
// 2.6 in CI's .cache/torch2-root): meta against real CPU tensors, and the
// GPT-2 trace against the built-in estimate in fp32 and amp-bf16.
func TestTorch2(t *testing.T) {
	py := torch2Python(t)
	for _, s := range metaRealScripts {
		t.Run("meta-real "+s, func(t *testing.T) { checkMetaAgreesWithReal(t, py, s) })
	}
	for _, prec := range []string{"fp32", "amp-bf16"} {
		t.Run("gpt2 builtin "+prec, func(t *testing.T) { checkGPT2AgreesWithBuiltin(t, py, prec, "eager") })
	}
}

// attentionAllocs: the allocations made by the fused attention ops, as
// "op dtype shape" strings.
func attentionAllocs(tr *estimate.Trace) []string {
	var out []string
	for _, a := range tr.Allocs {
		if strings.Contains(a.Op, "scaled_dot_product") {
			out = append(out, fmt.Sprintf("%s %s %s %d", strings.TrimPrefix(a.Op, "aten._scaled_dot_product_"), a.DType, a.Shape, a.Bytes))
		}
	}
	return out
}

// TestTorch2SDPA: GPT-2 with F.scaled_dot_product_attention (testdata/
// gpt2.py sdpa: causal, dropout 0.1) traced for an sm90 GPU. In amp-bf16
// the GPU runs flash attention (sdp_utils.cpp: no mask, bf16, head dim
// <= 256, sm80-sm90): per layer and step the trace holds its output and
// its fp32 log-sum-exp, and in the backward the gradients of q, k, v and
// FlashAttention-2's fp32 softmax_d and dq accumulator, never the math
// backend's b*h*s*s scores that the meta device alone would run. In fp32
// the GPU runs the memory-efficient kernel (flash takes no fp32): output,
// log-sum-exp padded to 32, one packed (b, s, 3, h, d) gradient of the
// fused qkv. An sm37 GPU (K80) has neither kernel (flash needs sm80,
// memory-efficient sm50), and the math backend runs, as on the GPU. Each SDPA trace agrees with the built-in estimate
// of --attention sdpa within 2%, and is below the eager trace.
func TestTorch2SDPA(t *testing.T) {
	py := torch2Python(t)
	const b, h, s, d, layers = 8, 4, 128, 32, 2
	flash := []string{
		fmt.Sprintf("flash_attention.default bfloat16 %d,%d,%d,%d %d", b, h, s, d, b*h*s*d*2),
		fmt.Sprintf("flash_attention.default float32 %d,%d,%d %d", b, h, s, b*h*s*4),
	}
	if torchAtLeast(py, 2, 7) {
		// flash_api.cpp from 2.7: the philox state is a uint64 pair and an
		// unused uint64 scalar, made on the GPU (before: int64 scalars on
		// the host, which the trace does not count)
		flash = append(flash, "flash_attention.default uint64 2 16", "flash_attention.default uint64  8")
	}
	flashBwd := []string{
		fmt.Sprintf("flash_attention_backward.default float32 %d,%d,%d %d", b, h, s, b*h*s*4),          // softmax_d
		fmt.Sprintf("flash_attention_backward.default float32 %d,%d,%d,%d %d", b, s, h, d, b*s*h*d*4),  // dq_accum
		fmt.Sprintf("flash_attention_backward.default bfloat16 %d,%d,%d,%d %d", b, h, s, d, b*h*s*d*2), // dq
		fmt.Sprintf("flash_attention_backward.default bfloat16 %d,%d,%d,%d %d", b, h, s, d, b*h*s*d*2), // dk
		fmt.Sprintf("flash_attention_backward.default bfloat16 %d,%d,%d,%d %d", b, h, s, d, b*h*s*d*2), // dv
	}
	efficient := []string{
		fmt.Sprintf("efficient_attention.default float32 %d,%d,%d,%d %d", b, h, s, d, b*h*s*d*4),
		fmt.Sprintf("efficient_attention.default float32 %d,%d,%d %d", b, h, (s+31)/32*32, b*h*((s+31)/32*32)*4),
	}
	efficientBwd := []string{
		fmt.Sprintf("efficient_attention_backward.default float32 %d,%d,%d %d", b, h, s, b*h*s*4),
		fmt.Sprintf("efficient_attention_backward.default float32 %d,%d,%d,%d %d", b, s, h, d, b*s*h*d*4),
		fmt.Sprintf("efficient_attention_backward.default float32 %d,%d,%d,%d %d", b, h, s, d, 3*b*h*s*d*4), // packed dq, dk, dv
	}
	repeat := func(fwd, bwd []string) string {
		var out []string
		for step := 0; step < 2; step++ {
			for l := 0; l < layers; l++ {
				out = append(out, fwd...)
			}
			for l := 0; l < layers; l++ {
				out = append(out, bwd...)
			}
		}
		return strings.Join(out, "\n")
	}
	script := filepath.Join("testdata", "gpt2.py")
	args := func(prec string) []string {
		return []string{script, "2", "128", "4", "1000", "8", "128", "foreach", prec, "sdpa"}
	}
	for _, c := range []struct{ prec, want string }{
		{"amp-bf16", repeat(flash, flashBwd)},
		{"fp32", repeat(efficient, efficientBwd)},
	} {
		t.Run(c.prec, func(t *testing.T) {
			tr := trace(t, py, "meta", args(c.prec)...)
			if got := strings.Join(attentionAllocs(tr), "\n"); got != c.want {
				t.Errorf("fused attention allocations:\n%s\nwant\n%s", got, c.want)
			}
			for _, a := range tr.Allocs {
				if a.Shape == fmt.Sprintf("%d,%d,%d,%d", b, h, s, s) {
					t.Errorf("an s x s allocation (%+v): the math backend ran", a)
				}
			}
			sdpa, _ := checkGPT2AgreesWithBuiltin(t, py, c.prec, "sdpa")
			eager := estimate.ReplayTrace(trace(t, py, "meta", script, "2", "128", "4", "1000", "8", "128", "foreach", c.prec),
				estimate.TraceReplay{ComputeCapability: 90})
			if sdpa.PeakAllocatedBytes >= eager.PeakAllocatedBytes {
				t.Errorf("sdpa trace %d B, eager trace %d B: the fused kernel saved nothing", sdpa.PeakAllocatedBytes, eager.PeakAllocatedBytes)
			}
		})
	}
	t.Run("sm37 math", func(t *testing.T) {
		var out strings.Builder
		tr, err := Run(context.Background(), Options{Argv: append([]string{py}, args("fp32")...), GPUCC: 37, Output: &out})
		if err != nil || tr.End == nil || tr.End.Kind != "steps" {
			t.Fatalf("%v %+v\n%s", err, tr, out.String())
		}
		if a := attentionAllocs(tr); len(a) != 0 {
			t.Errorf("sm37 ran a fused kernel: %v", a)
		}
	})
}

// TestTorch2CompileRunsEager: torch.compile(model) under the tracer returns
// the model as it is (testdata/gpt2.py compile, as nanoGPT calls it): the
// trace is the eager one, and one warning says so, naming the line. A
// function compiled at import (as DeepSpeed compiles its helpers) is said
// only once it is called (compiled-fn), not when it is not.
func TestTorch2CompileRunsEager(t *testing.T) {
	py := torch2Python(t)
	args := []string{filepath.Join("testdata", "gpt2.py"), "1", "64", "4", "200", "2", "32", "foreach", "fp32", "sdpa"}
	plain, compiled := trace(t, py, "meta", args...), trace(t, py, "meta", append(args, "compile")...)
	if a, b := allocations(plain), allocations(compiled); strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("compile changed the trace:\nplain    %v\ncompiled %v", a, b)
	}
	if len(plain.Warnings) != 0 {
		t.Errorf("warnings without compile: %+v", plain.Warnings)
	}
	w := compiled.Warnings
	if len(w) != 1 || w[0].Kind != "compile" || w[0].Op != "torch.compile" || len(w[0].Where) == 0 ||
		!strings.Contains(w[0].Where[0], "gpt2.py:") {
		t.Errorf("warnings %+v: want one compile warning at gpt2.py's torch.compile line", w)
	}
	w = trace(t, py, "meta", append(args, "compiled-fn")...).Warnings
	if len(w) != 1 || w[0].Kind != "compile" || len(w[0].Where) == 0 || !strings.Contains(w[0].Where[0], "gpt2.py:") {
		t.Errorf("warnings %+v: want one compile warning where gpt2.py calls its compiled function", w)
	}
}

// TestOwnMetaTensorsHoldNothing: what the program makes on meta itself (a
// model built under torch.device("meta") and never made, device="meta"
// written out) holds no GPU memory on meta as on real tensors; the model
// made from it with to_empty(device="cuda") is on the GPU, its weights
// parameters, and so is what is made under its weight's own device
// (testdata/ownmeta.py).
func TestOwnMetaTensorsHoldNothing(t *testing.T) {
	py := torch2Python(t)
	script := filepath.Join("testdata", "ownmeta.py")
	meta := bothModes(t, py, script)
	var bytes int64
	for _, a := range paramAllocs(meta) {
		bytes += a.Bytes
	}
	if want := int64(4 * (256*512 + 512 + 512*10 + 10)); bytes != want {
		t.Errorf("parameters %d B on the GPU, want the made model's %d B (the probe and the scratch never made)", bytes, want)
	}
	found := false // the buffer made under its weight's own device
	for _, a := range meta.Allocs {
		found = found || a.Shape == "65536" && a.DType == "float32"
	}
	if !found {
		t.Errorf("no 65,536-element buffer on the GPU: with torch.device(w.device) of a device tensor w is the GPU")
	}
}

// TestGroupedMMExperts: testdata/grouped_experts.py, experts as 3-D
// weights run by torch._grouped_mm (transformers 5.x's default on CUDA),
// torch >= 2.9. In fp32 the meta trace and the real CPU tensors make the
// same allocations and peaks: the meta kernel refuses fp32 (bf16 and fp16
// only, up to torch 2.14 at least) where the CUDA kernel runs it by its
// per-group fallback, so the tracer makes the output itself. Under bf16
// autocast the fp32 grouped GEMMs run too (they are not autocast ops) and
// the trace reaches its steps; before, it ended at the first expert.
func TestGroupedMMExperts(t *testing.T) {
	py := torch2Python(t)
	if !torchAtLeast(py, 2, 9) {
		t.Skip("torch._grouped_mm takes fp32 on CUDA from torch 2.9")
	}
	checkMetaAgreesWithReal(t, py, "grouped_experts.py 2")
	tr := trace(t, py, "meta", filepath.Join("testdata", "grouped_experts.py"), "2", "amp")
	if tr.End == nil || tr.End.Kind != "steps" {
		t.Fatalf("end %+v: want 2 steps traced", tr.End)
	}
	const tokens, k, h, d = 256, 2, 128, 64
	want := map[string]int{
		fmt.Sprintf("float32 %d,%d %d", tokens*k, 2*h, tokens*k*2*h*4): 0, // gate_up
		fmt.Sprintf("float32 %d,%d %d", tokens*k, d, tokens*k*d*4):     0, // down
	}
	for _, a := range tr.Allocs {
		if a.Op == "aten._grouped_mm.default" && a.Phase == "forward" {
			key := fmt.Sprintf("%s %s %d", a.DType, a.Shape, a.Bytes)
			if _, ok := want[key]; !ok {
				t.Errorf("grouped GEMM output %s: want one of %v", key, want)
			}
			want[key]++
		}
	}
	for key, n := range want {
		if n != 4 { // 2 steps x 2 blocks
			t.Errorf("%d forward grouped GEMM outputs %s, want 4", n, key)
		}
	}
}

// TestUnusedGraph (torch >= 2.0): an evaluation pass without
// torch.no_grad() whose outputs are kept for a metric across the next
// training step holds the graph autograd saved, which no backward uses:
// the trace says unused_graph at the peak and where the model was called;
// under torch.no_grad() nothing is saved there. A training script alone
// has none, and torch.func.grad still runs beside the tracer's saved-tensor
// hooks.
func TestUnusedGraph(t *testing.T) {
	py := torch2Python(t)
	run := func(args ...string) *estimate.Trace {
		var out strings.Builder
		tr, err := Run(context.Background(), Options{Argv: append([]string{py}, args...), Steps: 2, Output: &out})
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if tr.End == nil || tr.End.Kind != "steps" {
			t.Fatalf("%v: end %+v\n%s", args, tr.End, out.String())
		}
		return tr
	}
	gpu := estimate.GPU{Name: "test", MemoryBytes: 2 << 30}
	graph := run(filepath.Join("testdata", "evalgraph.py"), "grad")
	r, fit, err := estimate.FitTrace(graph, gpu, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	// 4 batches, each 4 tensors of 4096 x 2048 floats saved (two Linears'
	// outputs, GELU saves its input, and the two GELUs' outputs, the
	// next Linear's input)
	if u := r.UnusedGraph; u == nil || u.Bytes != 4*4*4096*2048*4 || !strings.HasSuffix(u.Caller, "evalgraph.py:27:evaluate") {
		t.Errorf("unused graph %+v, breakdown %+v", r.UnusedGraph, r.Breakdown)
	}
	// the no-grad lever's what-if against the program traced under no_grad
	_, made, err := estimate.FitTrace(run(filepath.Join("testdata", "evalgraph.py"), "nograd"), gpu, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	var lever *estimate.Lever
	for i := range fit.Levers {
		if fit.Levers[i].Lever == "no-grad" {
			lever = &fit.Levers[i]
		}
	}
	want := float64(made.BudgetBytes - made.HeadroomBytes) // the process's bytes
	if lever == nil || float64(lever.ProcessBytes) > 1.03*want || float64(lever.ProcessBytes) < 0.97*want {
		t.Errorf("no-grad lever %+v; traced under no_grad: %.0f B", lever, want)
	}
	nograd := estimate.ReplayTrace(run(filepath.Join("testdata", "evalgraph.py"), "nograd"), estimate.TraceReplay{})
	if nograd.UnusedGraph != nil {
		t.Errorf("under no_grad: unused graph %+v", nograd.UnusedGraph)
	}
	for _, s := range [][]string{{"gpt2.py", "2", "64", "4", "200", "2", "32"}, {"gan.py"}, {"funcgrad.py"}} {
		r := estimate.ReplayTrace(run(append([]string{filepath.Join("testdata", s[0])}, s[1:]...)...), estimate.TraceReplay{})
		for _, it := range r.Breakdown {
			if it.Name == "unused_graph" {
				t.Errorf("%s: unused graph %d B in a training loop", s[0], it.Bytes)
			}
		}
	}
}
