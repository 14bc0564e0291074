package tracerun

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
)

// dsPython: a python with torch >= 2.1 and DeepSpeed (taken from
// PYTHONPATH as the environment gives it); the DeepSpeed tests skip
// without one (CI has none: DeepSpeed comes from PyPI).
func dsPython(t *testing.T) string {
	t.Helper()
	py := distPython(t, 2, 1)
	if exec.Command(py, "-c", "import deepspeed").Run() != nil {
		t.Skip("deepspeed is not importable by " + py + ": the DeepSpeed tests need it")
	}
	return py
}

// dsParams: testdata/ds_train.py's model, 2 x (256x1024 + 1024) + 2 x
// (1024x256 + 256) parameters.
const dsParams = 1_051_136

// kindBytes: the bytes of the allocations of kind larger than 8 bytes
// (not the step counters), and whether one of exactly want bytes is among
// them (want 0: none asked).
func kindBytes(tr *estimate.Trace, kind string, want int64) (int64, bool) {
	var n int64
	found := want == 0
	for _, a := range tr.Allocs {
		if a.Kind == kind && a.Bytes > 8 {
			n += a.Bytes
			found = found || a.Bytes == want
		}
	}
	return n, found
}

// TestDeepSpeedZeRO: DeepSpeed's own engine (deepspeed.initialize, engine
// backward and step; FusedAdam, whose compiled kernel does nothing here)
// traced as rank 0 of 4 under torchrun, ZeRO stages 0 to 3 in bf16: the
// fp32 master weights and AdamW's two states counted as optimizer states,
// rank 0's share of them from stage 1 on; the bf16 weights, flat and whole
// (stages 0-2) or rank 0's partition (stage 3), as weights; the reduce
// bucket (reduce_bucket_size = 500,000 bf16 elements) as gradients.
func TestDeepSpeedZeRO(t *testing.T) {
	py := dsPython(t)
	script := filepath.Join("testdata", "ds_train.py")
	for _, c := range []struct {
		stage          string
		wrapper        string
		states, weight int64
		bucket         int64
	}{
		{"0", "DeepSpeed", 3 * 4 * dsParams, 2 * dsParams, 0},
		{"1", "DeepSpeed ZeRO-1", 3 * 4 * dsParams / 4, 2 * dsParams, 0},
		{"2", "DeepSpeed ZeRO-2", 3 * 4 * dsParams / 4, 2 * dsParams, 1_000_000},
		{"3", "DeepSpeed ZeRO-3", 3 * 4 * dsParams / 4, 2 * dsParams / 4, 1_000_000},
	} {
		t.Run("stage"+c.stage, func(t *testing.T) {
			var out strings.Builder
			tr, err := Run(context.Background(), Options{Argv: []string{py, "-m", "torch.distributed.run", "--nproc-per-node", "4",
				script, "--stage", c.stage}, Output: &out})
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if d := tr.Dist; tr.End == nil || tr.End.Kind != "steps" || d == nil || d.World != 4 || strings.Join(d.Wrappers, ",") != c.wrapper {
				t.Fatalf("end %+v, distributed %+v: want 2 steps as rank 0 of 4 under %s\n%s", tr.End, d, c.wrapper, out.String())
			}
			if n, _ := kindBytes(tr, "optstate", 0); n != c.states {
				t.Errorf("optimizer states %d bytes, want %d (fp32 master weights and AdamW's two states)", n, c.states)
			}
			if _, ok := kindBytes(tr, "param", c.weight); !ok {
				t.Errorf("no weights of %d bytes (the flat bf16 weights, or rank 0's partition)", c.weight)
			}
			if _, ok := kindBytes(tr, "grad", c.bucket); !ok {
				t.Errorf("no gradient bucket of %d bytes", c.bucket)
			}
			zeroInit := 0
			for _, w := range tr.Warnings {
				if w.Kind == "compile" {
					t.Errorf("a compile warning for the functions DeepSpeed compiles as it is imported: %+v", w)
				}
				if w.Kind == "zeroinit" {
					zeroInit++
				}
			}
			// ZeRO-3 moves a model not built under zero.Init to the GPU whole
			if want := map[bool]int{true: 1}[c.stage == "3"]; zeroInit != want {
				t.Errorf("%d notes that the model went to the GPU whole, want %d", zeroInit, want)
			}
		})
	}
}

// TestDeepSpeedOffload: ZeRO-3 with offload_optimizer and offload_param to
// the CPU keeps the fp32 master weights, Adam's states and rank 0's
// parameter partition on the host: none of them on the device, the
// partition counted as host parameters. The host buffers are placeholders:
// DeepSpeedCPUAdam's check that its parameters are on the CPU passes. A
// model built under deepspeed.zero.Init is partitioned as it is made: no
// note that ZeRO-3 moved it to the GPU whole; and GatheredParameters with
// modifier_rank=0 (transformers' weight loading under ZeRO-3) finds the
// gathered weights on the device it broadcasts from.
func TestDeepSpeedOffload(t *testing.T) {
	py := dsPython(t)
	script := filepath.Join("testdata", "ds_train.py")
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{py, "-m", "torch.distributed.run", "--nproc-per-node", "4",
		script, "--stage", "3", "--offload", "--offload-param"}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := tr.Dist; tr.End == nil || tr.End.Kind != "steps" || d == nil || d.HostParams != dsParams/4 {
		t.Fatalf("end %+v, distributed %+v: want 2 steps, rank 0's %d parameters on the host\n%s", tr.End, d, dsParams/4, out.String())
	}
	if n, _ := kindBytes(tr, "optstate", 0); n != 0 {
		t.Errorf("optimizer states %d bytes on the device, want none (offloaded)", n)
	}
	tr, err = Run(context.Background(), Options{Argv: []string{py, "-m", "torch.distributed.run", "--nproc-per-node", "4",
		script, "--stage", "3", "--zero-init"}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if tr.End == nil || tr.End.Kind != "steps" {
		t.Fatalf("zero.Init: end %+v\n%s", tr.End, out.String())
	}
	for _, w := range tr.Warnings {
		if w.Kind == "zeroinit" {
			t.Errorf("a model built under zero.Init: %+v", w)
		}
	}
}

// TestDeepSpeedLauncher: `deepspeed ARGS` is traced as the rank 0 worker
// DeepSpeed's own launcher makes (its parser; --local_rank=0 passed to
// the script, which checks it), its world from --num_gpus or
// --include; an op DeepSpeed compiles other than the optimizers' stops the
// trace naming it; arguments its parser refuses are a one-line error.
func TestDeepSpeedLauncher(t *testing.T) {
	bin := consoleScript(t, dsPython(t), "deepspeed", "from deepspeed.launcher.runner import main\nmain()\n")
	script := filepath.Join("testdata", "ds_train.py")
	for _, c := range []struct {
		args  []string
		world int
	}{
		{[]string{"--num_gpus", "4", script, "--stage", "2"}, 4},
		{[]string{"--include", "localhost:0,2", script, "--stage", "3"}, 2},
	} {
		var out strings.Builder
		tr, err := Run(context.Background(), Options{Argv: append([]string{bin}, c.args...), Output: &out})
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out.String())
		}
		want := "deepspeed " + itoa(c.world)
		if d := tr.Dist; tr.End == nil || tr.End.Kind != "steps" || d == nil || d.World != c.world || d.Launcher != want {
			t.Errorf("%v: end %+v, distributed %+v: want 2 steps as rank 0 of %d (%s)\n%s", c.args, tr.End, d, c.world, want, out.String())
		}
	}
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{bin, "--num_gpus", "2", script, "--load-op", "QuantizerBuilder"}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if tr.End == nil || tr.End.Kind != "error" || !strings.Contains(tr.End.Message, "DeepSpeed op quantizer") {
		t.Errorf("end %+v: want the trace stopped at the quantizer op, naming it", tr.End)
	}
	_, err = Run(context.Background(), Options{Argv: []string{bin, "--num_gpus", "x", script}, Output: &out})
	if err == nil || !strings.Contains(err.Error(), "deepspeed: its arguments do not parse") {
		t.Errorf("bad --num_gpus: err %v, want the launcher's arguments refused", err)
	}
}

// TestDeepSpeedAccelerate: `accelerate launch --use_deepspeed` is traced
// as the rank 0 worker accelerate's launcher makes (its DeepSpeed
// environment, through torchrun's launcher): the script's AdamW wrapped by
// ZeRO-2, its states rank 0's share.
func TestDeepSpeedAccelerate(t *testing.T) {
	bin := accelerateCLI(t, dsPython(t))
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{bin, "launch", "--use_deepspeed", "--zero_stage", "2",
		"--num_processes", "4", "--mixed_precision", "bf16", filepath.Join("testdata", "ds_accelerate.py")}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := tr.Dist; tr.End == nil || tr.End.Kind != "steps" || d == nil || d.World != 4 || d.Launcher != "accelerate 4" ||
		strings.Join(d.Wrappers, ",") != "DeepSpeed ZeRO-2" {
		t.Fatalf("end %+v, distributed %+v: want 2 steps as rank 0 of 4 under accelerate and ZeRO-2\n%s", tr.End, d, out.String())
	}
	if n, _ := kindBytes(tr, "optstate", 0); n != 3*4*dsParams/4 {
		t.Errorf("optimizer states %d bytes, want rank 0's share of the fp32 master weights and AdamW's states (%d)", n, 3*4*dsParams/4)
	}
}
