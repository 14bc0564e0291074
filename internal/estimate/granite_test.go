package estimate

import (
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// graniteAndLlama is ibm/PowerLM-3b (a GraniteForCausalLM) and the same
// shape walked as Llama, the stand-in the published PowerLM rows used
// before the Granite family.
func graniteAndLlama(t *testing.T) (*models.Model, *models.Model) {
	g, err := models.Preset("ibm/PowerLM-3b")
	if err != nil {
		t.Fatal(err)
	}
	if g.Family != models.Granite {
		t.Fatalf("PowerLM-3b: family %q", g.Family)
	}
	l := *g
	l.Family = models.Llama
	return g, &l
}

// TestGraniteMultipliersSaveNothing: Granite's multipliers are Python
// floats (modeling_granite.py), so autograd keeps nothing more than for
// Llama: the activations a block saves and a checkpointed training peak
// are Llama's; what they add are temporaries, which show in what the
// caching allocator reserves.
func TestGraniteMultipliersSaveNothing(t *testing.T) {
	g, l := graniteAndLlama(t)
	for _, ck := range []bool{false, true} {
		o := Options{Batch: 4, Seq: 4096, Precision: "bf16", Attention: "flash", Checkpointing: ck}
		rg, err := Estimate(g, o)
		if err != nil {
			t.Fatal(err)
		}
		rl, err := Estimate(l, o)
		if err != nil {
			t.Fatal(err)
		}
		if rg.ActivationBytesPerBlock != rl.ActivationBytesPerBlock {
			t.Errorf("checkpointing %v: Granite saves %d bytes a block, Llama %d", ck, rg.ActivationBytesPerBlock, rl.ActivationBytesPerBlock)
		}
		// Without checkpointing the peak is the start of backward, where
		// Llama's and Granite's saved tensors are the same; a temporary of
		// one block's width (a few hundred KiB here) may differ.
		if d := rg.PeakAllocatedBytes - rl.PeakAllocatedBytes; d < 0 || d > 1<<20 {
			t.Errorf("checkpointing %v: Granite's peak allocated %d, Llama's %d", ck, rg.PeakAllocatedBytes, rl.PeakAllocatedBytes)
		}
		if rg.PeakReservedBytes <= rl.PeakReservedBytes {
			t.Errorf("checkpointing %v: Granite's temporaries reserve nothing more than Llama (%d, %d)", ck, rg.PeakReservedBytes, rl.PeakReservedBytes)
		}
	}
}

// TestGraniteLogitsScaling: in inference the peak is the logits. Granite
// divides lm_head's output by logits_scaling, a new tensor of the logits'
// size and dtype while lm_head's output is alive (and the final norm's
// output, which Llama's peak holds, is gone): Llama's peak plus one bf16
// logits tensor less one hidden-state tensor.
func TestGraniteLogitsScaling(t *testing.T) {
	g, l := graniteAndLlama(t)
	o := Options{Batch: 4, Seq: 4096, Precision: "bf16", Attention: "flash", Inference: true}
	rg, err := Estimate(g, o)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := Estimate(l, o)
	if err != nil {
		t.Fatal(err)
	}
	T := int64(o.Batch * o.Seq)
	want := rl.PeakAllocatedBytes + 2*T*int64(g.Vocab) - 2*T*int64(g.Hidden)
	if rg.PeakAllocatedBytes != want {
		t.Errorf("inference peak: Granite %d, want Llama's %d + logits - hidden = %d", rg.PeakAllocatedBytes, rl.PeakAllocatedBytes, want)
	}
}
