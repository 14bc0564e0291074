package estimate

import (
	"strings"
	"testing"
)

// planTrace: one step of a float32 program with input data of a batch of
// 8 (half-batch-accum applies), a 512 MiB activation kept for the
// backward, and AdamW's states (8-bit applies), the step making the peak
// if the activation goes.
func planTrace(header, actDType string, actBytes string) string {
	return "torchmem-trace\t1\t" + header + "\ttorch=2.6.0\tsteps=1\n" +
		"S\t1\ttrain.py:10:<module>\n" +
		"A\t1\t268435456\tother\tsetup\t1\t1\t\taten._to_copy.default\tfloat32\t8192,8192\n" +
		"C\t1\tparam\n" +
		"P\tforward\t1\n" +
		"A\t2\t1048576\tdata\tforward\t1\t1\t\taten._to_copy.default\tfloat32\t8,32768\n" +
		"A\t3\t" + actBytes + "\tfwd\tforward\t1\t1\tfc\taten.mm.default\t" + actDType + "\t8,65536\n" +
		"P\tbackward\t1\n" +
		"A\t4\t268435456\tbwd\tbackward\t1\t1\t\taten.mm.default\tfloat32\t8192,8192\n" +
		"F\t3\nF\t2\n" +
		"C\t4\tgrad\n" +
		"P\toptimizer\t1\n" +
		"A\t5\t268435456\tother\toptimizer\t1\t1\t\taten.zeros_like.default\tfloat32\t8192,8192\n" +
		"A\t6\t268435456\tother\toptimizer\t1\t1\t\taten.zeros_like.default\tfloat32\t8192,8192\n" +
		"C\t5\toptstate\nC\t6\toptstate\n" +
		"P\tafter_step\t2\n" +
		"E\tsteps\t\t1\t1 optimizer steps traced\n"
}

func parsePlanTrace(t *testing.T, s string) *Trace {
	t.Helper()
	tr, err := ParseTrace(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestTraceCandidates: every combination but none, with the amp retrace
// as a second base: the cheapest first (amp alone), costs never falling,
// each with one lever or more.
func TestTraceCandidates(t *testing.T) {
	cs := traceCandidates([]Retrace{{}, {Lever: ampLeverBF16}})
	if len(cs) != 2*2*2*3*2-1 {
		t.Fatalf("%d candidates", len(cs))
	}
	bases := []Retrace{{}, {Lever: ampLeverBF16}}
	if got := strings.Join(cs[0].levers(bases), "+"); got != ampLeverBF16 {
		t.Errorf("first %q, want amp alone", got)
	}
	for i, c := range cs {
		if c.nLevers == 0 || i > 0 && c.cost < cs[i-1].cost {
			t.Errorf("candidate %d: %+v after %+v", i, c, cs[i-1])
		}
	}
}

// TestPlanTrace: on a GPU the job does not fit, the plan is the frontier
// of what fits, fastest first, each slower combination needing less; the
// amp retrace (half the activation) is a base; a GPU nothing fits has no
// combination; FitTrace plans only when the job does not fit.
func TestPlanTrace(t *testing.T) {
	base := parsePlanTrace(t, planTrace("device=meta", "float32", "536870912"))
	amp := parsePlanTrace(t, planTrace("device=meta\tautocast=bfloat16", "bfloat16", "268435456"))
	rts := []Retrace{AmpRetrace("bfloat16", amp)}
	as, _, err := FitTrace(base, GPU{Name: "big", MemoryBytes: 64 << 30}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 100 MiB less than the job needs: amp alone does not fit, amp with
	// 8-bit states does, and with half the batch too, needing less
	gpu := GPU{Name: "small", MemoryBytes: as.ProcessBytes - 100<<20}
	_, f, err := FitTrace(base, gpu, 0, rts...)
	if err != nil {
		t.Fatal(err)
	}
	p := f.TracePlan
	if f.Fits || p == nil || len(p.Combinations) < 2 || p.Replayed < len(p.Combinations) {
		t.Fatalf("fits %v, plan %+v", f.Fits, p)
	}
	for i, c := range p.Combinations {
		t.Logf("%d. %v %d B, cost %.2f", i+1, c.Levers, c.ProcessBytes, c.Cost)
		if c.ProcessBytes > gpu.MemoryBytes {
			t.Errorf("%v: %d B does not fit %d", c.Levers, c.ProcessBytes, gpu.MemoryBytes)
		}
		if i > 0 && (c.Cost < p.Combinations[i-1].Cost || c.ProcessBytes >= p.Combinations[i-1].ProcessBytes) {
			t.Errorf("%v after %v: not the frontier", c.Levers, p.Combinations[i-1].Levers)
		}
	}
	one, err := TraceCombined(base, gpu, 0, rts, p.Combinations[0].Levers...)
	if err != nil || one.ProcessBytes != p.Combinations[0].ProcessBytes {
		t.Errorf("TraceCombined %v: %+v, %v; the plan said %d B", p.Combinations[0].Levers, one, err, p.Combinations[0].ProcessBytes)
	}
	if _, err := TraceCombined(base, gpu, 0, nil, "amp-bf16"); err == nil {
		t.Error("amp without its retrace: no error")
	}
	if _, f, _ := FitTrace(base, GPU{Name: "tiny", MemoryBytes: 1 << 20}, 0, rts...); f.TracePlan == nil || len(f.TracePlan.Combinations) != 0 {
		t.Errorf("a GPU nothing fits: plan %+v", f.TracePlan)
	}
	if _, f, _ := FitTrace(base, GPU{Name: "big", MemoryBytes: 64 << 30}, 0, rts...); f.TracePlan != nil {
		t.Errorf("the job fits: plan %+v", f.TracePlan)
	}
}
