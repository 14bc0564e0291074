package python

import (
	"os/exec"
	"testing"
)

// TestTraceValuesBudget runs _trace_values (the values the meta trace
// knows) on real meta tensors: a shadow answers while its tensor is
// unwritten, an in-place write it did not follow makes the values unknown,
// the shadows alive stay within BUDGET bytes (a script keeping many small
// tensors cannot fill the host), and a dead tensor's shadow is given back.
func TestTraceValuesBudget(t *testing.T) {
	py := ""
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import torch").Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		t.Skip("no python3 with torch")
	}
	dir := t.TempDir()
	if err := WriteTree(dir); err != nil {
		t.Fatal(err)
	}
	script := `
import gc, sys, torch
sys.path.insert(0, sys.argv[1])
from torchmem_hook import _trace_values as v
v.setup(torch)
v.BUDGET = 3 * 8 * 1000
a = torch.empty(1000, dtype=torch.long, device="meta")
v.keep(a, torch.arange(1000))
assert v.values(a)[:3] == [0, 1, 2], v.values(a)[:3]
a.add_(1)  # not followed: stale
assert v.shadow(a) is None
ts = [torch.empty(1000, dtype=torch.long, device="meta") for _ in range(5)]
for t in ts:
    v.keep(t, torch.zeros(1000, dtype=torch.long))
kept = sum(v.shadow(t) is not None for t in ts)
assert kept == 3, kept  # a's stale shadow was given back: three fit the budget
del ts, a
gc.collect()
assert v._held[0] == 0, v._held[0]
b = torch.empty(4, device="meta")
v.keep(b, [1.0, 2.0, 3.0, 4.0])
assert v.values(b) == [1.0, 2.0, 3.0, 4.0]
print("ok")
`
	out, err := exec.Command(py, "-B", "-c", script, dir).CombinedOutput()
	if err != nil || string(out) != "ok\n" {
		t.Fatalf("%v\n%s", err, out)
	}
}
