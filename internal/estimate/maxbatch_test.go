package estimate

import (
	"testing"
)

// TestMaxBatchEveryBatchBelowFits: near the budget memory is not monotone
// in the batch (the allocator's cache release succeeds or fails with how
// its segments are cut). These jobs once had a batch below the reported
// largest that ran out of memory; now every batch up to it fits, and a
// batch above it that fits on its own is reported as not fitting, with a
// note, so that the fit, the largest batch and the plan agree.
func TestMaxBatchEveryBatchBelowFits(t *testing.T) {
	for _, c := range []struct {
		model string
		o     Options
		gb    int64
	}{
		{"meta-llama/Llama-3.2-1B", Options{Seq: 256, Precision: "fp32"}, 27},
		{"meta-llama/Llama-3.2-1B", Options{Seq: 256, Precision: "bf16"}, 33},
		{"vit_b_32", Options{Precision: "bf16"}, 3},
		{"vit_b_32", Options{Precision: "amp-bf16"}, 3},
	} {
		md := preset(t, c.model)
		budget := c.gb * 1e9
		o := c.o
		o.AllocatorLimit = allocatorLimit(budget)
		mb := MaxBatch(md, o, budget)
		if mb < 1 {
			t.Fatalf("%s on %d GB: no batch fits", c.model, c.gb)
		}
		islands := 0
		for b := 1; b <= mb+8; b++ {
			o.Batch = b
			r, err := Estimate(md, o)
			if err != nil {
				t.Fatal(err)
			}
			ok := fitsIn(r, budget)
			if b <= mb && !ok {
				t.Errorf("%s %s on %d GB: largest batch %d, but batch %d does not fit", c.model, c.o.Precision, c.gb, mb, b)
			}
			if b > mb+1 && ok {
				islands++
				_, f, err := Plan(md, o, GPU{Name: "x", MemoryBytes: budget}, 0)
				if err != nil {
					t.Fatal(err)
				}
				if f.Fits || f.MaxBatch != mb || len(f.Notes) == 0 {
					t.Errorf("%s batch %d (an island above %d): fits %v, max batch %d, notes %v", c.model, b, mb, f.Fits, f.MaxBatch, f.Notes)
				}
			}
		}
		t.Logf("%s %s on %d GB: largest batch %d, %d islands above it", c.model, c.o.Precision, c.gb, mb, islands)
	}
}
