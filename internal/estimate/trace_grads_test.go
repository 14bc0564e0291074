package estimate

import (
	"strings"
	"testing"
)

// gradsTrace: two steps of one weight (1), its gradient (3) kept through
// the second forward and zeroed in place: the second backward makes the
// weight's gradient anew (5, transposed), adds it in and frees it.
const gradsTrace = "torchmem-trace\t1\tdevice=meta\ttorch=1.13.0\tsteps=2\n" +
	"S\t1\ttrain.py:10:<module>\n" +
	"A\t1\t4194304\tother\tsetup\t1\t1\t\taten._to_copy.default\tfloat32\t1024,1024\n" +
	"C\t1\tparam\n" +
	"P\tforward\t1\n" +
	"A\t2\t1048576\tfwd\tforward\t1\t1\tfc\taten.mm.default\tfloat32\t256,1024\n" +
	"P\tbackward\t1\n" +
	"A\t3\t4194304\tbwd\tbackward\t1\t1\t\taten.mm.default\tfloat32\t1024,1024\n" +
	"F\t2\n" +
	"C\t3\tgrad\n" +
	"P\toptimizer\t1\n" +
	"P\tafter_step\t2\n" +
	"P\tforward\t2\n" +
	"A\t4\t1048576\tfwd\tforward\t2\t1\tfc\taten.mm.default\tfloat32\t256,1024\n" +
	"P\tbackward\t2\n" +
	"A\t6\t1048576\tbwd\tbackward\t2\t1\t\taten.mm.default\tfloat32\t256,1024\n" +
	"A\t5\t4194304\tbwd\tbackward\t2\t1\t\taten.mm.default\tfloat32\t1024,1024\n" +
	"F\t5\nF\t6\nF\t4\n" +
	"P\toptimizer\t2\n" +
	"P\tafter_step\t3\n" +
	"E\tsteps\t\t1\t2 optimizer steps traced\n"

// TestGradsToNone: the kept gradient is freed when the first step ends,
// and the second backward's gradient is kept in its place; the
// activation gradient of another shape (6) is freed as it was.
func TestGradsToNone(t *testing.T) {
	tr, err := ParseTrace(strings.NewReader(gradsTrace))
	if err != nil {
		t.Fatal(err)
	}
	c := tr.gradsToNone()
	if c == nil {
		t.Fatal("no what-if")
	}
	if got, want := events(c), "+1 +2 +3 -2 -3 +4 +6 +5 -6 -4"; got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	// the step's end is where the after_step phase begins: the free is in it
	if p := c.phases[3]; p.phase != "after_step" || c.events[p.at].alloc != 2 || !c.events[p.at].free {
		t.Errorf("after_step begins at event %d: %+v", p.at, c.events[p.at])
	}
}

// TestGradsAlreadyNone: a program that sets its gradients to None (freed
// at the step's end, made anew as .grad) has nothing to change; nor has
// one whose backward remakes no gradient of the kept one's shape.
func TestGradsAlreadyNone(t *testing.T) {
	none := strings.Replace(gradsTrace, "P\tafter_step\t2\n", "P\tafter_step\t2\nF\t3\n", 1)
	none = strings.Replace(none, "F\t5\nF\t6", "F\t6", 1)
	none = strings.Replace(none, "F\t6\nF\t4\n", "F\t6\nF\t4\nC\t5\tgrad\n", 1)
	for name, text := range map[string]string{
		"set to None": none,
		"other shape": strings.Replace(gradsTrace, "mm.default\tfloat32\t1024,1024\nF\t5", "mm.default\tfloat32\t512,2048\nF\t5", 1),
	} {
		tr, err := ParseTrace(strings.NewReader(text))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c := tr.gradsToNone(); c != nil {
			t.Errorf("%s: a what-if: %s", name, events(c))
		}
	}
}
