package tracerun

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/estimate/models"
)

// TestTraceAgreesWithBuiltinGPT2AMP: testdata/gpt2.py with its forward and
// loss under torch.autocast("cuda", bfloat16), traced on meta (where the
// tracer does autocast's casts, torch's own doing nothing there), and the
// built-in estimator's amp-bf16 walk of the same config agree within 2% on
// the peak allocated; and the AMP trace is below the fp32 one, as the
// half-precision activations make it.
func TestTraceAgreesWithBuiltinGPT2AMP(t *testing.T) {
	py := torchPython(t)
	script := filepath.Join("testdata", "gpt2.py")
	tr := trace(t, py, "meta", script, "2", "128", "4", "1000", "8", "128", "foreach", "amp-bf16")
	got := estimate.ReplayTrace(tr, estimate.TraceReplay{ComputeCapability: 90})
	fp32 := estimate.ReplayTrace(trace(t, py, "meta", script, "2", "128", "4", "1000", "8", "128", "foreach"),
		estimate.TraceReplay{ComputeCapability: 90})
	md, err := models.FromConfigMap(map[string]any{"model_type": "gpt2", "architectures": []any{"GPT2LMHeadModel"},
		"vocab_size": 1000.0, "n_positions": 128.0, "n_embd": 128.0, "n_layer": 2.0, "n_head": 4.0,
		"activation_function": "gelu_new", "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1})
	if err != nil {
		t.Fatal(err)
	}
	want, err := estimate.Estimate(md, estimate.Options{Batch: 8, Seq: 128, Precision: "amp-bf16", Optimizer: "adamw",
		OptimizerImpl: "foreach", Attention: "eager", ComputeCapability: 90})
	if err != nil {
		t.Fatal(err)
	}
	diff := float64(got.PeakAllocatedBytes-want.PeakAllocatedBytes) / float64(want.PeakAllocatedBytes)
	t.Logf("amp-bf16 peak allocated: trace %d B (%s), built-in %d B (%s): %+.2f%%; fp32 trace %d B",
		got.PeakAllocatedBytes, got.PeakPhase, want.PeakAllocatedBytes, want.PeakPhase, 100*diff, fp32.PeakAllocatedBytes)
	if diff < -0.02 || diff > 0.02 {
		t.Errorf("trace and built-in disagree by %+.2f%% on the amp-bf16 peak allocated", 100*diff)
	}
	// the weights' bf16 copies autocast keeps (for the backward), named as
	// the built-in names them
	if g, w := breakdownOf(got.Breakdown, "autocast_weight_copies"), breakdownOf(want.Breakdown, "autocast_weight_copies"); g == 0 || g != w {
		t.Errorf("autocast weight copies at the peak: trace %d B, built-in %d B", g, w)
	}
	if got.PeakAllocatedBytes >= fp32.PeakAllocatedBytes {
		t.Errorf("amp-bf16 trace %d B, fp32 trace %d B: autocast made nothing smaller", got.PeakAllocatedBytes, fp32.PeakAllocatedBytes)
	}
}

func breakdownOf(items []estimate.Item, name string) int64 {
	for _, it := range items {
		if it.Name == name {
			return it.Bytes
		}
	}
	return 0
}

// TestMultiheadAttentionIsTraced: F.multi_head_attention_forward hands
// itself to the tracer's torch-function mode at its top, and the mode is
// off while its body runs; the tracer runs that body with the mode on, so
// under autocast its in-projection is made in bf16 as on the GPU (it was
// fp32: the cast never happened), and on torch 2.x its
// scaled_dot_product_attention runs the GPU's fused kernel (flash in
// bf16, memory-efficient in fp32), never the math backend's b*h*s*s
// scores (testdata/mha.py: nn.TransformerEncoder, 2 layers). Its
// batch-first input reaches the in-projection transposed, so at::linear
// goes by matmul and adds the bias in place, as the tracer must too.
func TestMultiheadAttentionIsTraced(t *testing.T) {
	const b, s, d, h = 4, 64, 64, 4
	args := []string{filepath.Join("testdata", "mha.py"), "4", "64", "64", "4"}
	inProj := fmt.Sprintf(",%d", 3*d) // the packed q, k, v projection's last dim
	scores := fmt.Sprintf("%d,%d,%d,%d", b, h, s, s)
	check := func(t *testing.T, py string, torch2 bool) {
		for _, prec := range []string{"fp32", "amp-bf16"} {
			tr := trace(t, py, "meta", append(args, prec)...)
			want := "float32"
			if prec == "amp-bf16" {
				want = "bfloat16"
			}
			var proj, score int
			for _, a := range tr.Allocs {
				if strings.Contains(a.Module, "self_attn") && strings.HasSuffix(a.Shape, inProj) && a.Phase == "forward" {
					proj++
					if a.Op == "aten.add.Tensor" {
						t.Errorf("%s: the in-projection's bias was added out of place (%s %s): a GPU adds it in place", prec, a.Op, a.Shape)
					}
					if a.DType != want {
						t.Errorf("%s: in-projection %s made in %s, want %s", prec, a.Op, a.DType, want)
					}
				}
				if a.Shape == scores {
					score++
				}
			}
			if proj == 0 {
				t.Errorf("%s: no in-projection (last dim %d) traced inside self_attn", prec, 3*d)
			}
			fused := attentionAllocs(tr)
			t.Logf("%s: %d in-projections, %d score-sized tensors, fused attention %v", prec, proj, score, fused)
			if torch2 && (len(fused) == 0 || score > 0) {
				t.Errorf("%s: torch 2.x ran the math attention (%d score-sized tensors, fused %v); an sm90 GPU runs a fused kernel", prec, score, fused)
			}
		}
	}
	t.Run("torch1", func(t *testing.T) { check(t, torchPython(t), false) })
	t.Run("torch2", func(t *testing.T) { check(t, torch2Python(t), true) })
}
