package python

import (
	"os/exec"
	"testing"
)

// TestPlainTensors: _common.plain_tensors finds the tensors with storage
// inside wrapper subclasses (torchao's float8 weight around an FSDP2
// shard: FSDP2's "materialized" check looked at the wrapper alone, and the
// trace stopped), nested, and a plain tensor is itself.
func TestPlainTensors(t *testing.T) {
	py, dir := torchAndTree(t)
	script := `
import sys, torch
sys.path.insert(0, sys.argv[1])
from torchmem_hook._common import plain_tensors

class Wrap(torch.Tensor):
    @staticmethod
    def __new__(cls, inner):
        r = torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype, device=inner.device)
        r._inner = inner
        return r

    def __tensor_flatten__(self):
        return ["_inner"], None

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise NotImplementedError(func)

t = torch.zeros(4, device="meta")
assert plain_tensors(t) == [t]
got = plain_tensors(Wrap(t))
assert len(got) == 1 and got[0] is t, got
got = plain_tensors(Wrap(Wrap(t)))
assert len(got) == 1 and got[0] is t, got
`
	if out, err := exec.Command(py, "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// torchAndTree: a python3 with torch (skipped without one) and the hook's
// tree written to a temporary directory.
func torchAndTree(t *testing.T) (string, string) {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import torch").Run() == nil {
			dir := t.TempDir()
			if err := WriteTree(dir); err != nil {
				t.Fatal(err)
			}
			return p, dir
		}
	}
	t.Skip("no python3 with torch")
	return "", ""
}
