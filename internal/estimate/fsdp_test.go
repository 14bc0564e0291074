package estimate

import "testing"

// TestFSDPKeepsTheRoot: under FSDP the root unit (the tied embedding and
// head, the final norm: what no wrapped block holds) is unsharded from the
// forward through the backward, on top of every rank's shards; the blocks
// are gathered one at a time. Measured by tracing FSDP2 (fully_shard per
// layer and the root) in bench/results/trace-real-scripts.md: the weights
// at the peak were the shards plus the root's fp32 parameters, exactly.
func TestFSDPKeepsTheRoot(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.2-1B")
	md.Layers = 2
	o := Options{Batch: 1, Seq: 256, Precision: "amp-bf16", ZeroStage: 3, WorldSize: 8, Optimizer: "adamw"}
	weights := func(fsdp bool) int64 {
		o.FSDP = fsdp
		r, err := Estimate(md, o)
		if err != nil {
			t.Fatal(err)
		}
		return itemBytes(r, "weights")
	}
	var root, all int64
	for _, p := range md.Params() {
		all += p.Elems
		if p.Block < 0 {
			root += p.Elems
		}
	}
	fsdp, zero3 := weights(true), weights(false)
	if want := 4 * (all/8 + root); fsdp < want || fsdp > want+want/100 {
		t.Errorf("FSDP weights at the peak %d B, want the shards and the unsharded root, about %d B", fsdp, want)
	}
	// DeepSpeed's ZeRO-3 gathers the root's parameters on use: not kept.
	if zero3 >= fsdp-4*root/2 {
		t.Errorf("ZeRO-3 weights at the peak %d B: the root is FSDP's only (FSDP %d B)", zero3, fsdp)
	}
}
