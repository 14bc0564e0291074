package estimate

import (
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

func moePreset(t *testing.T, name string) *models.Model {
	t.Helper()
	md, err := models.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// TestMoEWeightsAreTheTotal: every expert's weights are on the GPU (a
// token uses k of them, the model holds all): the weights at load are the
// total parameter count, not the active one.
func TestMoEWeightsAreTheTotal(t *testing.T) {
	md := moePreset(t, "Qwen1.5-MoE-A2.7B")
	r, err := Estimate(md, Options{Batch: 1, Seq: 512, Precision: "bf16", Inference: true, NoLoadFP32: true})
	if err != nil {
		t.Fatal(err)
	}
	w := itemBytes(r, "weights")
	if lo := 2 * md.ParamCount(); w < lo || w > lo+lo/100 {
		t.Errorf("weights %d bytes, want about 2 x %d parameters", w, md.ParamCount())
	}
}

// TestMoEActivationsScaleWithTopK: a sparse layer keeps for backward
// about what a dense gated MLP k times as many tokens wide would, so
// routing each token to more experts costs activations (not weights).
func TestMoEActivationsScaleWithTopK(t *testing.T) {
	per := func(k int) int64 {
		md := moePreset(t, "Mixtral-8x7B-v0.1")
		md.Layers = 2
		md.MoE.TopK = k
		r, err := Estimate(md, Options{Batch: 2, Seq: 1024, Precision: "bf16"})
		if err != nil {
			t.Fatal(err)
		}
		return r.ActivationBytesPerBlock
	}
	a1, a2, a4 := per(1), per(2), per(4)
	// Each extra expert per token adds the expert MLP's saved tensors for
	// T more rows: gathered input (h), gate, act, up, product (4 x I),
	// output and scaled output (2 x h: index_add_ keeps its source), bf16.
	// Within 2 %: without the scaled output it would be 6 % under.
	T, h, I := int64(2*1024), int64(4096), int64(14336)
	want := T * 2 * (3*h + 4*I)
	for _, d := range []int64{a2 - a1, (a4 - a2) / 2} {
		if d < want*98/100 || d > want*102/100 {
			t.Errorf("one more expert per token adds %d bytes per block, want about %d (k=1,2,4: %d %d %d)", d, want, a1, a2, a4)
		}
	}
}

// TestMoEExpertCapacity: a capacity factor pads every expert's rows, so
// activations grow with it; 1.0 over an even split changes nothing.
func TestMoEExpertCapacity(t *testing.T) {
	md := moePreset(t, "deepseek-moe-16b-base")
	md.Layers = 2
	md.MoE.DenseLayers = nil
	run := func(f float64) int64 {
		r, err := Estimate(md, Options{Batch: 1, Seq: 2048, Precision: "bf16", ExpertCapacity: f})
		if err != nil {
			t.Fatal(err)
		}
		return r.ActivationBytesPerBlock
	}
	drop, one, two := run(0), run(1), run(2)
	if one != drop {
		t.Errorf("capacity 1.0 over an even split: %d, dropless %d", one, drop)
	}
	if two <= one {
		t.Errorf("capacity 2.0: %d, not above 1.0's %d", two, one)
	}
}

func itemBytes(r *Result, name string) int64 {
	for _, it := range r.Breakdown {
		if it.Name == name {
			return it.Bytes
		}
	}
	return 0
}

// TestMoELoRA: PEFT's default targets for Mixtral (q_proj, v_proj) give
// r·(in+out) per targeted linear: 32 layers × 8·((4096+4096)+(4096+1024))
// = 3,407,872 trainable parameters, and QLoRA walks the experts.
func TestMoELoRA(t *testing.T) {
	md := moePreset(t, "Mixtral-8x7B-v0.1")
	r, err := Estimate(md, Options{Batch: 1, Seq: 512, Precision: "bf16", Checkpointing: true,
		PEFT: PEFTOptions{Method: "qlora"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.TrainableParams != 3407872 {
		t.Errorf("trainable %d, want 3407872", r.TrainableParams)
	}
	if w := itemBytes(r, "weights"); w > md.ParamCount() {
		t.Errorf("4-bit weights %d bytes for %d parameters", w, md.ParamCount())
	}
}
