package estimate

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// TestBNBSavesInput: bitsandbytes < 0.43.2 keeps each 4-bit layer's
// compute-dtype input with its autograd node. Under reentrant
// checkpointing that is one block's worth (released when the block's
// backward returns); without checkpointing every block's inputs stay to
// the end of the backward, so the cost grows with the depth.
func TestBNBSavesInput(t *testing.T) {
	md, err := models.Preset("mistralai/Mistral-7B-v0.1")
	if err != nil {
		t.Fatal(err)
	}
	peak := func(ckpt, saves bool) int64 {
		o := Options{Batch: 4, Seq: 4096, Precision: "amp-bf16", Checkpointing: ckpt, Attention: "flash", Accum: 1,
			PEFT:  PEFTOptions{Method: "qlora", R: 16, Alpha: 16, Targets: "q_proj,k_proj,v_proj,o_proj"},
			Quant: QuantOptions{Method: "nf4", Double: true, SavesInput: saves}}
		r, err := Estimate(md, o)
		if err != nil {
			t.Fatal(err)
		}
		return r.PeakAllocatedBytes
	}
	T := int64(4 * 4096)
	h, I := int64(md.Hidden), int64(md.Intermediate)
	// At 16k tokens a block's backward, not the loss, sets the peak.
	// One block's kept inputs in bf16: q, k, v, gate and up cast the fp32
	// norm output each (5h), down its product (I); o_proj's input is the
	// bf16 attention output itself.
	block := T * (5*h + I) * 2
	ck := peak(true, true) - peak(true, false)
	if ck <= 0 || ck > 2*block {
		t.Errorf("checkpointed: keeping the inputs adds %d bytes, want (0, %d] (one block's)", ck, 2*block)
	}
	full := peak(false, true) - peak(false, false)
	if full < int64(md.Layers)/2*block {
		t.Errorf("not checkpointed: keeping the inputs adds %d bytes, want at least half of %d blocks x %d", full, md.Layers, block)
	}
	o := Options{Batch: 1, Seq: 128, Inference: true, Quant: QuantOptions{Method: "gptq", SavesInput: true}}
	if _, err := Estimate(md, o); err == nil || !strings.Contains(err.Error(), "--bnb-saves-input") {
		t.Errorf("--bnb-saves-input with gptq: got %v, want an error naming the flag", err)
	}
}
