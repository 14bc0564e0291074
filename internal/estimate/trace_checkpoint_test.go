package estimate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestNumberedBlock(t *testing.T) {
	for _, c := range []struct{ module, family, block string }{
		{"model.layers.3.mlp.down_proj", "model.layers", "model.layers.3"},
		{"model.layers.3", "model.layers", "model.layers.3"},
		{"model.layers.3.mlp.experts.7", "model.layers", "model.layers.3"}, // the outermost
		{"layer1.0.conv1", "layer1", "layer1.0"},
		{"encoder.block.11.layer.0", "encoder.block", "encoder.block.11"},
		{"0.fc", "", ""}, // a Sequential's own members have no family name
		{"lm_head", "", ""},
		{"h.1x", "", ""},
		{"h..2", "h.", "h..2"},
		{"", "", ""},
	} {
		fam, blk := numberedBlock(c.module)
		if fam != c.family || blk != c.block {
			t.Errorf("numberedBlock(%q) = %q, %q; want %q, %q", c.module, fam, blk, c.family, c.block)
		}
	}
}

// ckptTrace: one step of two blocks h.0 and h.1 and a head. h.0 makes a
// saved activation (10, last used by the next op), a temporary (11) and
// its output (12); h.1 a saved activation with no last use said (20) and
// its output (22); the head an activation (30). The backward frees them
// in reverse.
const ckptTrace = "torchmem-trace\t1\tdevice=meta\ttorch=2.5.1\tsteps=1\n" +
	"S\t1\ttrain.py:10:<module>\n" +
	"P\tforward\t1\n" +
	"A\t10\t1048576\tfwd\tforward\t1\t1\th.0\taten.mm.default\tfloat32\t512,512\n" +
	"A\t11\t1048576\tfwd\tforward\t1\t1\th.0.act\taten.gelu.default\tfloat32\t512,512\n" +
	"F\t11\n" +
	"A\t12\t1048576\tfwd\tforward\t1\t1\th.0\taten.add.Tensor\tfloat32\t512,512\n" +
	"O\t12\th.0\n" +
	"L\t10\t2\n" +
	"A\t20\t1048576\tfwd\tforward\t1\t1\th.1.attn\taten.bmm.default\tfloat32\t512,512\n" +
	"A\t22\t1048576\tfwd\tforward\t1\t1\th.1\taten.add.Tensor\tfloat32\t512,512\n" +
	"O\t22\th.1\n" +
	"A\t30\t1048576\tfwd\tforward\t1\t1\tlm_head\taten.mm.default\tfloat32\t512,512\n" +
	"P\tbackward\t1\n" +
	"A\t40\t1048576\tbwd\tbackward\t1\t1\t\taten.mm.default\tfloat32\t512,512\n" +
	"F\t30\nF\t22\nF\t20\nF\t12\nF\t10\nF\t40\n" +
	"P\tafter_step\t2\n" +
	"E\tsteps\t\t1\t1 optimizer steps traced\n"

// events renders a trace's events as +id (made) and -id (freed).
func events(t *Trace) string {
	var b strings.Builder
	for i, e := range t.events {
		if i > 0 {
			b.WriteByte(' ')
		}
		sign := "+"
		if e.free {
			sign = "-"
		}
		fmt.Fprintf(&b, "%s%d", sign, t.Allocs[e.alloc].ID)
	}
	return b.String()
}

// TestCheckpointedEvents: each block's saved activation is freed in the
// forward (h.0's after its last use, h.1's at the block's end) and made
// again, with h.0's temporary, just before the backward frees the first
// of them; the outputs and the head are as they were.
func TestCheckpointedEvents(t *testing.T) {
	tr, err := ParseTrace(strings.NewReader(ckptTrace))
	if err != nil {
		t.Fatal(err)
	}
	fams := checkpointFamilies(tr)
	if !reflect.DeepEqual(fams, []string{"h"}) {
		t.Fatalf("families %v, want [h]", fams)
	}
	c, used := tr.checkpointed(fams)
	if !reflect.DeepEqual(used, []string{"h"}) {
		t.Fatalf("checkpointed %v, want [h]", used)
	}
	want := "+10 +11 -10 -11 +12 +20 +22 -20 +30 +40 -30 -22 +20 -20 -12 +10 +11 -11 -10 -40"
	if got := events(c); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	// the backward begins where it did: before +40, its recomputations in it
	if at := c.phases[1]; at.phase != "backward" || c.events[at.at].alloc != c.events[9].alloc || at.at != 9 {
		t.Errorf("backward begins at event %d, want 9", at.at)
	}
	if events(tr) != "+10 +11 -11 +12 +20 +22 +30 +40 -30 -22 -20 -12 -10 -40" {
		t.Errorf("the trace itself changed: %s", events(tr))
	}
}

// TestCheckpointKeepsInputs: a block's input (5, given to h.0: I) that
// the trace frees in the forward, as autocast's bf16 copy of it is what
// autograd saves, is held by the checkpoint until h.0's backward is done
// (its saved activation made again and freed); h.1's input, its own
// saved activation of h.0 (12 is h.0's output, freed late anyway), stays.
func TestCheckpointKeepsInputs(t *testing.T) {
	text := strings.Replace(ckptTrace, "P\tforward\t1\n", "P\tforward\t1\n"+
		"A\t5\t1048576\tfwd\tforward\t1\t1\tembed\taten.embedding.default\tfloat32\t512,512\nI\t5\th.0\n", 1)
	text = strings.Replace(text, "F\t11\n", "F\t11\nF\t5\n", 1)
	text = strings.Replace(text, "L\t10\t2\n", "L\t10\t3\nI\t12\th.1\n", 1)
	tr, err := ParseTrace(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := tr.checkpointed(checkpointFamilies(tr))
	want := "+5 +10 +11 -10 -11 +12 +20 +22 -20 +30 +40 -30 -22 +20 -20 -12 +10 +11 -11 -10 -5 -40"
	if got := events(c); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
}

// TestCheckpointKeeps: what no backward frees (a cache kept past the
// step) stays; a family the backward already runs again (the program
// checkpoints it) has no lever; nor does one whose blocks keep nothing
// for the backward; a single numbered module is no stack.
func TestCheckpointKeeps(t *testing.T) {
	kept := strings.Replace(ckptTrace, "F\t20\n", "", 1)
	tr, err := ParseTrace(strings.NewReader(kept))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := tr.checkpointed(checkpointFamilies(tr))
	if want := "+10 +11 -10 -11 +12 +20 +22 +30 +40 -30 -22 -12 +10 +11 -11 -10 -40"; events(c) != want {
		t.Errorf("events\n got %s\nwant %s", events(c), want)
	}
	recomputed := strings.Replace(ckptTrace, "A\t40\t1048576\tbwd\tbackward\t1\t1\t\t", "A\t40\t1048576\tbwd\tbackward\t1\t1\th.1.attn\t", 1)
	if tr, _ := ParseTrace(strings.NewReader(recomputed)); len(checkpointFamilies(tr)) != 0 {
		t.Errorf("a family the backward recomputes: %v", checkpointFamilies(tr))
	}
	// a frozen encoder's blocks (no_grad: all they make is gone at once)
	frozen := strings.Replace(ckptTrace, "P\tforward\t1\n", "P\tforward\t1\n"+
		"A\t5\t1048576\tfwd\tforward\t1\t1\tenc.layers.0\taten.mm.default\tfloat32\t512,512\nF\t5\n"+
		"A\t6\t1048576\tfwd\tforward\t1\t1\tenc.layers.1\taten.mm.default\tfloat32\t512,512\nF\t6\n", 1)
	tr, err = ParseTrace(strings.NewReader(frozen))
	if err != nil {
		t.Fatal(err)
	}
	fams := checkpointFamilies(tr)
	if _, used := tr.checkpointed(fams); !reflect.DeepEqual(fams, []string{"enc.layers", "h"}) || !reflect.DeepEqual(used, []string{"h"}) {
		t.Errorf("families %v, checkpointed %v; want [enc.layers h], [h]", fams, used)
	}
	single := strings.ReplaceAll(ckptTrace, "\th.1", "\th.0")
	if tr, _ := ParseTrace(strings.NewReader(single)); len(checkpointFamilies(tr)) != 0 {
		t.Errorf("one block: %v", checkpointFamilies(tr))
	}
}

// TestCheckpointLever: blocks whose saved activations make the peak: the
// lever is offered, naming them, and saves what they held at once but
// for one block's recomputation.
func TestCheckpointLever(t *testing.T) {
	big := strings.ReplaceAll(ckptTrace, "\t1048576\t", "\t536870912\t")
	r, f := leversOf(t, big)
	for _, l := range f.Levers {
		if l.Lever != ckptLever {
			continue
		}
		if !reflect.DeepEqual(l.Modules, []string{"h.N"}) {
			t.Errorf("modules %v, want [h.N]", l.Modules)
		}
		// the peak was 6 of them (10, 12, 20, 22, 30, 40); checkpointed, 5
		// at the most (the outputs, the head's, the gradient and one
		// recomputed)
		if l.SavedBytes < 512<<20 || l.ProcessBytes >= r.ProcessBytes {
			t.Errorf("checkpoint saves %d B of %d B", l.SavedBytes, r.ProcessBytes)
		}
		return
	}
	t.Errorf("no checkpoint lever among %+v", f.Levers)
}

// TestParseBlockEvents: O and L events name allocations made, and L an
// event the trace has reached.
func TestParseBlockEvents(t *testing.T) {
	head := "torchmem-trace\t1\nA\t1\t512\tfwd\tforward\t1\t0\th.0\top\tfloat32\t128\n"
	for _, bad := range []string{"O\t2\th.0\n", "L\t2\t1\n", "L\t1\t2\n", "L\t1\t0\n", "L\t1\tx\n", "O\t1\n"} {
		if _, err := ParseTrace(strings.NewReader(head + bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	tr, err := ParseTrace(strings.NewReader(head + "O\t1\th.0\nL\t1\t1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.returned[0] != "h.0" || tr.lastUse[0] != 0 {
		t.Errorf("returned %v, last use %v", tr.returned, tr.lastUse)
	}
}
