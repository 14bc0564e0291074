package tracerun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
)

// torchPython is Debian's /usr/bin/python3 when it has torch (CI installs
// python3-torch); tests skip otherwise. A pyenv shim on PATH often has no torch.
func torchPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("TORCHMEM_TORCH_PYTHON"), "/usr/bin/python3", "python3"} {
		if p == "" {
			continue
		}
		if exec.Command(p, "-c", "import torch").Run() == nil {
			return p
		}
	}
	t.Skip("no python3 with torch (apt install python3-torch): the tracer's tests need one")
	return ""
}

func trace(t *testing.T, py, device string, args ...string) *estimate.Trace {
	t.Helper()
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: append([]string{py}, args...), Device: device, Output: &out})
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", device, args, err, out.String())
	}
	if tr.End == nil || tr.End.Kind != "steps" {
		t.Fatalf("%s %v: the trace ended with %+v, want 2 optimizer steps\n%s", device, args, tr.End, out.String())
	}
	return tr
}

// allocations: the sizes of every allocation by category, sorted.
func allocations(tr *estimate.Trace) []string {
	out := estimate.TraceCategorySizes(tr)
	sort.Strings(out)
	return out
}

// TestMetaAgreesWithRealTensors: the same script traced with real CPU
// tensors and with meta tensors (shapes only) allocates the same storages
// of the same sizes in the same categories, and reaches the same live-bytes
// and allocated peaks. Models: an MLP, a CNN with BatchNorm, a transformer
// with attention and a custom autograd Function (testdata/).
func TestMetaAgreesWithRealTensors(t *testing.T) {
	py := torchPython(t)
	for _, s := range []string{"mlp.py", "cnn.py", "transformer.py"} {
		t.Run(s, func(t *testing.T) {
			script := filepath.Join("testdata", s)
			meta, real := trace(t, py, "meta", script), trace(t, py, "cpu", script)
			rm, rr := estimate.ReplayTrace(meta, 0), estimate.ReplayTrace(real, 0)
			am, ar := allocations(meta), allocations(real)
			if strings.Join(am, " ") != strings.Join(ar, " ") {
				t.Errorf("allocations differ:\nmeta %v\nreal %v", am, ar)
			}
			if rm.LiveBytesPeak != rr.LiveBytesPeak || rm.PeakAllocatedBytes != rr.PeakAllocatedBytes {
				t.Errorf("peaks differ: meta live %d allocated %d, real live %d allocated %d",
					rm.LiveBytesPeak, rm.PeakAllocatedBytes, rr.LiveBytesPeak, rr.PeakAllocatedBytes)
			}
			if rm.Steps != 2 || len(am) < 20 {
				t.Errorf("%d steps, %d allocations: want 2 steps of a real model", rm.Steps, len(am))
			}
			t.Logf("%s: %d allocations, live peak %d B, allocated peak %d B, reserved %d B (%s), both modes",
				s, len(am), rm.LiveBytesPeak, rm.PeakAllocatedBytes, rm.PeakReservedBytes, rm.PeakPhase)
		})
	}
}
