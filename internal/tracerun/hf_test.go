package tracerun

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/estimate/models"
)

// hfPython: a python with torch and Hugging Face transformers (taken from
// PYTHONPATH as the environment gives it); the tests that run transformers'
// own model code skip without one (CI has none: transformers comes from PyPI).
func hfPython(t *testing.T) string {
	t.Helper()
	py := torchPython(t)
	if exec.Command(py, "-c", "import transformers").Run() != nil {
		t.Skip("transformers is not importable by " + py + ": the Hugging Face model-code tests need it")
	}
	return py
}

// hfCase: testdata/hf_train.py's arguments (model, batch, seq, precision,
// checkpointing, attention) and the built-in estimator's options for them.
type hfCase struct {
	model, precision, attn string
	batch, seq             int
	ckpt                   bool
}

func (c hfCase) args(dir string) []string {
	ck := "0"
	if c.ckpt {
		ck = "1"
	}
	return []string{filepath.Join("testdata", "hf_train.py"), c.model, itoa(c.batch), itoa(c.seq), c.precision, ck, c.attn,
		filepath.Join(dir, "config.json")}
}

// builtin: the built-in estimate of the config hf_train.py wrote (the
// config.json transformers itself serialized).
func (c hfCase) builtin(t *testing.T, dir string) *estimate.Result {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	md, err := models.FromConfigMap(cfg)
	if err != nil {
		t.Fatal(err)
	}
	attn := c.attn
	if attn == "default" {
		attn = "sdpa"
	}
	r, err := estimate.Estimate(md, estimate.Options{Batch: c.batch, Seq: c.seq, Precision: c.precision, Optimizer: "adamw",
		OptimizerImpl: "foreach", Attention: attn, Checkpointing: c.ckpt, ComputeCapability: 90})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHFMetaAgreesWithRealTensors: transformers' own GPT-2, Llama and BERT
// (small configs, AdamW, two steps) traced with meta tensors and with real
// CPU tensors reach the same live-bytes and allocated peaks. Not on torch
// 1.13 with transformers 4.36, where cpu mode misses a few bytes the meta
// trace has, rightly: labels.to(logits.device) (cpu there) reads as a copy
// to the host, and torch.where's backward makes scalar_tensor(0) on the
// device with no tensor input (bench/results/trace-hf.md).
func TestHFMetaAgreesWithRealTensors(t *testing.T) {
	py := hfPython(t)
	if torchV, tfV := hfVersions(t, py); !versionAtLeast(torchV, 2, 0) || !versionAtLeast(tfV, 4, 46) {
		t.Skipf("torch %s, transformers %s: cpu mode's known blind spots on this code", torchV, tfV)
	}
	for _, c := range []hfCase{
		{model: "gpt2-small", precision: "fp32", attn: "eager", batch: 4, seq: 64},
		{model: "llama-small", precision: "fp32", attn: "eager", batch: 4, seq: 64},
		{model: "bert-small", precision: "fp32", attn: "eager", batch: 4, seq: 64},
	} {
		t.Run(c.model, func(t *testing.T) {
			meta, real := trace(t, py, "meta", c.args(t.TempDir())...), trace(t, py, "cpu", c.args(t.TempDir())...)
			rm, rr := estimate.ReplayTrace(meta, estimate.TraceReplay{}), estimate.ReplayTrace(real, estimate.TraceReplay{})
			if rm.LiveBytesPeak != rr.LiveBytesPeak || rm.PeakAllocatedBytes != rr.PeakAllocatedBytes {
				t.Errorf("peaks differ: meta live %d allocated %d, real live %d allocated %d; only on meta %v; only real %v",
					rm.LiveBytesPeak, rm.PeakAllocatedBytes, rr.LiveBytesPeak, rr.PeakAllocatedBytes,
					allocsOnlyIn(meta, real), allocsOnlyIn(real, meta))
			}
			t.Logf("%s: live peak %d B, allocated peak %d B; %d and %d allocations", c.model, rm.LiveBytesPeak,
				rm.PeakAllocatedBytes, len(meta.Allocs), len(real.Allocs))
		})
	}
}

// TestHFTraceAgreesWithBuiltin: transformers' own model code traced, and the
// built-in estimator's walk of the config.json that transformers wrote,
// agree within 2% on the peak allocated (batch 8 x 128 tokens, AdamW).
// The built-in follows torch 2.x and transformers 4.46+; older ones make
// more (bench/results/trace-hf.md: a shifted copy of the logits for the
// loss before 4.46, mean() saving its input on torch 1.13), so it skips.
func TestHFTraceAgreesWithBuiltin(t *testing.T) {
	py := hfPython(t)
	if torchV, tfV := hfVersions(t, py); !versionAtLeast(torchV, 2, 0) || !versionAtLeast(tfV, 4, 46) {
		t.Skipf("torch %s, transformers %s: the built-in models torch >= 2.0 and transformers >= 4.46", torchV, tfV)
	}
	for _, c := range []hfCase{
		{model: "gpt2-small", precision: "fp32", attn: "eager", batch: 8, seq: 128},
		{model: "llama-small", precision: "fp32", attn: "eager", batch: 8, seq: 128},
	} {
		t.Run(c.model+"-"+c.precision+"-"+c.attn, func(t *testing.T) {
			dir := t.TempDir()
			got := estimate.ReplayTrace(trace(t, py, "meta", c.args(dir)...), estimate.TraceReplay{ComputeCapability: 90})
			want := c.builtin(t, dir)
			diff := float64(got.PeakAllocatedBytes-want.PeakAllocatedBytes) / float64(want.PeakAllocatedBytes)
			t.Logf("peak allocated: trace %d B (%s), built-in %d B (%s): %+.2f%%", got.PeakAllocatedBytes, got.PeakPhase,
				want.PeakAllocatedBytes, want.PeakPhase, 100*diff)
			if diff < -0.02 || diff > 0.02 {
				t.Errorf("trace and built-in disagree by %+.2f%% on the peak allocated", 100*diff)
			}
		})
	}
}

// TestHFPatternsOnMeta: testdata/hfpatterns.py, three patterns of
// transformers' model code, on meta: "0 in ids" is an answered read (a
// warning), torch.autocast(x.device.type) is CUDA's, and a checkpointed
// block's forward recomputed inside loss.backward() still has CUDA's fused
// dropout (native_dropout: a one-byte mask), as in the forward, not the
// host's (a float noise tensor), and under autocast its GEMMs in bf16 as
// in the forward, reentrant or not; what follows a recompute (the optimizer's
// states, the next batch) is no module's.
func TestHFPatternsOnMeta(t *testing.T) {
	py := torchPython(t)
	for _, mode := range []string{"reentrant", "nonreentrant", "reentrant amp", "nonreentrant amp"} {
		t.Run(mode, func(t *testing.T) {
			tr := trace(t, py, "meta", append([]string{filepath.Join("testdata", "hfpatterns.py")}, strings.Fields(mode)...)...)
			want := "float32"
			if strings.HasSuffix(mode, "amp") {
				want = "bfloat16"
			}
			gemms := 0
			for _, a := range tr.Allocs {
				if strings.HasSuffix(a.Module, ".up") && a.Op == "aten.addmm.default" {
					gemms++
					if a.DType != want {
						t.Errorf("%s: %s output in the %s, want %s (the recompute in the forward's autocast state)",
							a.Module, a.DType, a.Phase, want)
					}
				}
			}
			if gemms != 8 {
				t.Errorf("%d addmm outputs of the .up layers, want 8 (2 steps x 2 blocks, forward and recompute)", gemms)
			}
			contains := false
			for _, w := range tr.Warnings {
				contains = contains || strings.Contains(w.Op, "__contains__")
			}
			if !contains {
				t.Errorf("warnings %+v: want the __contains__ read named", tr.Warnings)
			}
			fwd, bwd := 0, 0
			for _, a := range tr.Allocs {
				if !strings.HasSuffix(a.Module, ".drop") {
					continue
				}
				if a.Op != "aten.native_dropout.default" {
					t.Errorf("dropout allocation %+v: want CUDA's native_dropout, in the backward's recompute too", a)
				} else if a.Phase == "backward" {
					bwd++
				} else {
					fwd++
				}
			}
			// 2 optimizer steps x 2 blocks x (output, mask), made in the
			// forward and again in the backward's recompute.
			if fwd != 8 || bwd != 8 {
				t.Errorf("native_dropout allocations: %d in forward, %d in backward; want 8 and 8", fwd, bwd)
			}
			// Non-reentrant checkpointing stops a recompute once what the
			// backward needs is made (early_stop), inside blocks.N.down: the
			// modules it entered are left again, so the optimizer's states
			// and the next step's batch are no module's.
			for _, a := range tr.Allocs {
				if (a.Phase == "optimizer" || a.Kind == "data") && a.Module != "" {
					t.Errorf("%s %s in the %s, step %d, named after module %q: a recompute's module stack outlived it",
						a.Op, a.Kind, a.Phase, a.Step, a.Module)
				}
			}
		})
	}
}

// allocsOnlyIn: a's allocations (op, module, shape, dtype) that b lacks,
// counted as a multiset; at most 10.
func allocsOnlyIn(a, b *estimate.Trace) []string {
	key := func(x estimate.TraceAlloc) string {
		return x.Op + " " + x.Module + " " + x.DType + "[" + x.Shape + "]"
	}
	n := map[string]int{}
	for _, x := range b.Allocs {
		n[key(x)]++
	}
	var out []string
	for _, x := range a.Allocs {
		if k := key(x); n[k] > 0 {
			n[k]--
		} else if len(out) < 10 {
			out = append(out, k)
		}
	}
	return out
}

// hfVersions: torch's and transformers' versions as py imports them.
func hfVersions(t *testing.T, py string) (torchV, tfV string) {
	t.Helper()
	out, err := exec.Command(py, "-c", "import torch, transformers; print(torch.__version__, transformers.__version__)").Output()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Sscan(string(out), &torchV, &tfV)
	return torchV, tfV
}

// versionAtLeast: "2.6.0+debian" >= 2.0, "4.56.2" >= 4.46.
func versionAtLeast(v string, major, minor int) bool {
	var a, b int
	if n, _ := fmt.Sscanf(v, "%d.%d", &a, &b); n < 2 {
		return false
	}
	return a > major || a == major && b >= minor
}

// TestHFVisionLanguage: transformers' own Qwen2.5-VL (testdata/hf_vl.py,
// a small config, one image per sample) trains on meta to its steps. Its
// vision tower reads its own sizes back from the device: the merge size
// from torch.tensor([m], device=grid.device).tolist() (made below the
// dispatcher, so its values and its allocation were unknown to the
// tracer), the windows' boundaries through torch.unique_consecutive (no
// meta kernel), and the image-token count through _is_all_true().item()
// (torch._check_tensor_all). In fp32 with eager attention the meta and
// real-CPU-tensor runs agree within 4 KiB: meta has, rightly, the
// attention mask's bool copy made on the device (1 KiB), which cpu mode
// cannot tell from a host copy.
func TestHFVisionLanguage(t *testing.T) {
	py := hfPython(t)
	if exec.Command(py, "-c", "from transformers import Qwen2_5_VLConfig").Run() != nil {
		t.Skip("this transformers has no Qwen2.5-VL")
	}
	args := []string{filepath.Join("testdata", "hf_vl.py"), "2", "512"}
	meta := trace(t, py, "meta", append(args, "fp32", "eager")...)
	real := trace(t, py, "cpu", append(args, "fp32", "eager")...)
	rm, rr := estimate.ReplayTrace(meta, estimate.TraceReplay{}), estimate.ReplayTrace(real, estimate.TraceReplay{})
	if d := rm.LiveBytesPeak - rr.LiveBytesPeak; d < 0 || d > 4096 || rm.Steps != 2 {
		t.Errorf("fp32: meta live peak %d B, real %d B, %d steps: want 2 steps and meta within 4 KiB above",
			rm.LiveBytesPeak, rr.LiveBytesPeak, rm.Steps)
	}
	amp := trace(t, py, "meta", append(args, "amp", "sdpa")...)
	if amp.End == nil || amp.End.Kind != "steps" {
		t.Errorf("amp sdpa: the trace ended with %+v, want its 2 steps", amp.End)
	}
	t.Logf("fp32 eager: meta %d B, real %d B live; amp sdpa: %d events", rm.LiveBytesPeak, rr.LiveBytesPeak, len(amp.Allocs))
}
