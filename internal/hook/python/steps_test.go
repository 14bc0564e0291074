package python

import (
	"os/exec"
	"testing"
)

// TestStepsCountIterations runs _common.Steps (which optimizer.step()
// calls count toward --steps) on the patterns training loops have: one
// optimizer; two over one backward; a GAN's two, each after its own
// backward (an iteration ends with the generator's step, learned when the
// discriminator steps again); an optimizer that skips some iterations; a
// critic stepped five times per generator step.
func TestStepsCountIterations(t *testing.T) {
	py, dir := pythonAndTree(t)
	script := `
import sys
sys.path.insert(0, sys.argv[1])
from torchmem_hook._common import Steps

def run(seq):
    """seq: optimizer names stepped, "|" a forward and backward pass."""
    s, out = Steps(), []
    for x in seq.split():
        if x == "|":
            s.pass_ran()
        else:
            out.append(s.step(x))
    return out

# one optimizer: each step ends an iteration
assert run("| A | A | A") == [1, 1, 1], run("| A | A | A")
# two over one backward, or one stepped twice: one iteration each time
assert run("| A B | A B") == [1, 0, 1, 0], run("| A B | A B")
assert run("| A A | A A") == [1, 0, 1, 0], run("| A A | A A")
# a GAN: D after its backward, G after its own; the first step counts
# (nothing is known yet), then iterations end at G's
assert run("| D | G | D | G | D | G") == [1, 0, 0, 1, 0, 1], run("| D | G | D | G | D | G")
# G skipped once: the open iteration counts when the next begins
assert run("| D | G | D | D | G") == [1, 0, 0, 1, 1], run("| D | G | D | D | G")
# a critic stepped five times per generator step: each critic step is one
assert run("| C | C | C | C | C | G | C") == [1, 1, 1, 1, 1, 0, 1]
`
	out, err := exec.Command(py, "-c", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
