package python

import (
	"os/exec"
	"testing"
)

// TestTraceValuesBudget runs _trace_values (the values the meta trace
// knows) on real meta tensors: a shadow answers while its tensor is
// unwritten, an in-place write it did not follow makes the values unknown,
// the shadows alive stay within BUDGET bytes (a script keeping many small
// tensors cannot fill the host), a dead tensor's shadow is given back, and
// a placeholder's memory (host zeros for device data, or numpy's view of
// them) is never taken for known values.
func TestTraceValuesBudget(t *testing.T) {
	py, dir := torchAndTree(t)
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
# placeholders (host zeros standing for device data) never enter as values,
# whether moved back directly or through numpy's view of the same memory
z = torch.zeros(8)
v.mark_placeholder(z)
n = torch.zeros(8).numpy()
v.mark_placeholder(n)
assert not v._host_values(z) and not v._host_values(z[2:])
assert not v._host_values(torch.from_numpy(n))
assert v._host_values(torch.zeros(8))
print("ok")
`
	out, err := exec.Command(py, "-B", "-c", script, dir).CombinedOutput()
	if err != nil || string(out) != "ok\n" {
		t.Fatalf("%v\n%s", err, out)
	}
}
