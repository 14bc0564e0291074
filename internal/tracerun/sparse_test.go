package tracerun

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
)

// Sparse embedding gradients (nn.Embedding/EmbeddingBag(sparse=True):
// DLRM, recommenders). Before _trace_sparse.py the meta trace stopped at
// the first optimizer step (add_ of a sparse gradient into a weight has no
// meta kernel) and counted the gradient's values as temporaries.
// testdata/sparse_embedding.py: an EmbeddingBag (512 lookups a step into
// 5000 x 32) and an Embedding (64 lookups), 200 and 50 distinct rows when
// the indices come from the host ("known"), drawn on the device otherwise.

const (
	sparseBagValues = 512 * 32 * 4 // the bag's gradient values, one row a lookup
	sparseEmbValues = 64 * 32 * 4
)

// checkSparse: each optimizer's path (and clip_grad_norm_ of sparse
// gradients, which stopped the trace at its norm) traces its two steps on meta; the
// gradients are gradients and count the tables' elements once as trainable;
// Adagrad and SparseAdam coalesce to the distinct rows where the indices'
// values are known and to every lookup, said, where not; accumulation
// concatenates. agreeGrads: whether the cpu trace's gradients must be the
// same sizes (torch 2.x; torch 1.13's zero_grad keeps emptied sparse
// gradients, which the CPU kernel regrows in place where the tracer does
// not see it, the CUDA kernel the trace follows into new storages).
func checkSparse(t *testing.T, py string, agreeGrads bool) {
	script := filepath.Join("testdata", "sparse_embedding.py")
	for _, opt := range []string{"sgd", "sgdm", "adagrad", "sparseadam", "accumulate", "clip"} {
		wheres := []string{"known"}
		if opt == "adagrad" || opt == "sparseadam" { // (only coalesce reads the indices' values)
			wheres = append(wheres, "device")
		}
		for _, where := range wheres {
			t.Run(opt+" "+where, func(t *testing.T) {
				meta := trace(t, py, "meta", script, opt, where)
				r := estimate.ReplayTrace(meta, estimate.TraceReplay{})
				if r.Steps != 2 || r.TrainableParams != r.Params {
					t.Errorf("%d steps, trainable %d of %d params: want 2 steps, all trainable once", r.Steps, r.TrainableParams, r.Params)
				}
				grads := allocSizes(meta, "grad", "")
				for _, want := range []int64{sparseBagValues, sparseEmbValues} {
					if !slices.Contains(grads, want) {
						t.Errorf("gradients %v: want the sparse values of %d B", grads, want)
					}
				}
				checkCoalesce(t, meta, opt, where)
				if opt == "accumulate" && !slices.Contains(allocSizes(meta, "grad", "aten.add_.Tensor"), 2*sparseBagValues) {
					t.Errorf("gradients %v: want the two backwards' values concatenated (%d B)", grads, 2*sparseBagValues)
				}
				if agreeGrads && where == "known" && (opt == "sgd" || opt == "sgdm" || opt == "accumulate") {
					real := trace(t, py, "cpu", script, opt, where)
					if g := allocSizes(real, "grad", ""); !slices.Equal(grads, g) {
						t.Errorf("gradient sizes differ:\nmeta %v\ncpu  %v", grads, g)
					}
				}
			})
		}
	}
}

// checkCoalesce: the coalesced values Adagrad and SparseAdam make, rows
// by rule, and the note where they were not known.
func checkCoalesce(t *testing.T, meta *estimate.Trace, opt, where string) {
	t.Helper()
	if opt != "adagrad" && opt != "sparseadam" {
		return
	}
	shapes := map[string]bool{}
	for _, a := range meta.Allocs {
		if a.Op == "aten._coalesce.default" && a.DType == "float32" {
			shapes[a.Shape] = true
		}
	}
	noted := false
	for _, w := range meta.Warnings {
		noted = noted || (w.Kind == "datashape" && w.Op == "aten._coalesce.default" && w.ShapeRule() == estimate.ShapeMost)
	}
	want, wantNote := []string{"200,32", "50,32"}, false
	if where == "device" {
		want, wantNote = []string{"512,32", "64,32"}, true
	}
	for _, s := range want {
		if !shapes[s] {
			t.Errorf("coalesced values %v: want %s", shapes, s)
		}
	}
	if noted != wantNote {
		t.Errorf("a 'taken as distinct' note: %v, want %v (notes %+v)", noted, wantNote, meta.Warnings)
	}
}

// allocSizes: the sorted sizes of the allocations of kind (op: made by
// that op only, "" any).
func allocSizes(tr *estimate.Trace, kind, op string) []int64 {
	var out []int64
	for _, a := range tr.Allocs {
		if a.Kind == kind && (op == "" || a.Op == op) {
			out = append(out, a.Bytes)
		}
	}
	slices.Sort(out)
	return out
}

func TestSparseGradients(t *testing.T) {
	checkSparse(t, torchPython(t), false)
}

func TestTorch2SparseGradients(t *testing.T) {
	checkSparse(t, torch2Python(t), true)
}

// TestSparseOps: what each op on a sparse gradient gives on meta
// (testdata/sparse_ops.py prints nnz, the values' shape, dtype and the
// coalesced flag) is what it gives on real tensors, but for sparse +
// sparse: CUDA concatenates (nnz 200 of 100 and 100), the CPU merges.
// Before, clone gave nnz 0 on meta, add_ left it at 100, and add_ into a
// dense tensor, mul, coalesce and sparse_mask raised.
func TestSparseOps(t *testing.T) {
	for name, py := range map[string]func(*testing.T) string{"1.13": torchPython, "2.x": torch2Python} {
		t.Run(name, func(t *testing.T) {
			p := py(t)
			script := filepath.Join("testdata", "sparse_ops.py")
			real, err := exec.Command(p, script).Output()
			if err != nil {
				t.Fatalf("%s %s: %v", p, script, err)
			}
			var out strings.Builder
			if _, err := Run(context.Background(), Options{Argv: []string{p, script}, Device: "meta", Output: &out}); err != nil {
				t.Fatalf("meta: %v\n%s", err, out.String())
			}
			want := strings.Split(strings.TrimSpace(string(real)), "\n")
			for i, l := range want {
				for _, concat := range []string{"sub ", "add_ ", "add_ detach "} {
					if strings.HasPrefix(l, concat+"sparse 100 (100,") {
						want[i] = strings.Replace(l, "100 (100,", "200 (200,", 1)
					}
				}
				if strings.HasPrefix(l, "values (100, 16) (1, 100)") {
					want[i] = "values (200, 16) (1, 200)"
				}
			}
			got := printed(out.String(), want)
			if !slices.Equal(got, want) {
				t.Errorf("meta printed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// printed: the lines of out that begin as a line of want does (the
// program's own output among the tracer's report).
func printed(out string, want []string) []string {
	heads := map[string]bool{}
	for _, l := range want {
		heads[strings.Fields(l)[0]] = true
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && heads[f[0]] && !strings.HasPrefix(l, " ") {
			got = append(got, strings.TrimSpace(l))
		}
	}
	return got
}

// TestCTCLoss: F.ctc_loss (wav2vec2's CTC head) has no meta kernel in any
// torch; the trace of a Wav2Vec2ForCTC fine-tuning stopped in its first
// forward. Now testdata/ctc.py traces its steps on meta as CUDA runs it:
// log_alpha (batch, frames, 2 x the longest target + 1), the longest
// target from lengths the host gave (17) or, drawn on the device, the
// padded targets' width (20) with a note; the backward's log_beta beside
// it, and on the large path (300 frames) its blanks' sums. The cpu trace
// makes the same log_alpha.
func TestCTCLoss(t *testing.T) {
	for name, py := range map[string]func(*testing.T) string{"1.13": torchPython, "2.x": torch2Python} {
		t.Run(name, func(t *testing.T) {
			p := py(t)
			script := filepath.Join("testdata", "ctc.py")
			cases := []struct {
				args          []string
				alpha, blanks string
				noted         bool
			}{
				{[]string{"known"}, "4,50,35", "", false},
				{[]string{"device"}, "4,50,41", "", true},
				{[]string{"known", "large"}, "4,300,35", "4,300,18", false},
			}
			// (each build two of them: the suite's time)
			if name == "2.x" {
				cases = cases[1:]
			} else {
				cases = cases[:2]
			}
			for _, c := range cases {
				meta := trace(t, p, "meta", append([]string{script}, c.args...)...)
				got := map[string]bool{}
				for _, a := range meta.Allocs {
					if strings.HasPrefix(a.Op, "aten._ctc_loss") {
						got[strings.TrimPrefix(a.Op, "aten.")+" "+a.Shape] = true
					}
				}
				want := []string{"_ctc_loss", "_ctc_loss_backward"}
				for _, op := range want {
					if !got[op+".Tensor "+c.alpha] && !got[op+".default "+c.alpha] {
						t.Errorf("%v: %s made %v, want a %s of %s", c.args, op, got, map[bool]string{true: "log_alpha", false: "log_beta"}[op == "_ctc_loss"], c.alpha)
					}
				}
				if c.blanks != "" && !got["_ctc_loss_backward.Tensor "+c.blanks] && !got["_ctc_loss_backward.default "+c.blanks] {
					t.Errorf("%v: backward made %v, want the large path's %s", c.args, got, c.blanks)
				}
				noted := false
				for _, w := range meta.Warnings {
					noted = noted || (w.Op == "_ctc_loss" && w.ShapeRule() == estimate.ShapeMost)
				}
				if noted != c.noted {
					t.Errorf("%v: a note of the lengths assumed: %v, want %v", c.args, noted, c.noted)
				}
				if c.args[0] == "known" && len(c.args) == 1 {
					real := trace(t, p, "cpu", append([]string{script}, c.args...)...)
					found := false
					for _, a := range real.Allocs {
						found = found || (strings.HasPrefix(a.Op, "aten._ctc_loss.") && a.Shape == c.alpha)
					}
					if !found {
						t.Errorf("cpu: no log_alpha of %s", c.alpha)
					}
				}
			}
		})
	}
}

// TestStatesNotMade: a layer no traced step used (LayerDrop's, here the
// third of testdata/layerdrop.py, skipped in the first three steps) has
// no gradient, and Adam no states for it: the trace says what they come
// to once it trains (exp_avg and exp_avg_sq of its 65,792 weights), in
// both modes. The wav2vec2 blog's fine-tuning lost 21.3M parameters'
// states so over its two traced steps.
func TestStatesNotMade(t *testing.T) {
	py := torchPython(t)
	script := filepath.Join("testdata", "layerdrop.py")
	for _, mode := range []string{"meta", "cpu"} {
		tr := trace(t, py, mode, script)
		r := estimate.ReplayTrace(tr, estimate.TraceReplay{})
		const params = 256*256 + 256
		if p := r.StatesNotMade; p == nil || p.Params != params || p.Bytes != 2*4*params {
			t.Errorf("%s: states not made %+v, want %d parameters' Adam states (%d B)", mode, p, params, 2*4*params)
		}
	}
}
