package estimate

import (
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// TestTRLBF16Cast: TRL's peft_module_casting_to_bf16 makes the embeddings
// and lm_head bf16 again after prepare_model_for_kbit_training, so the
// weights shrink by 2 bytes for each of their elements (once for a tied
// head), nothing else changes size, and the flag is refused where TRL
// does not cast.
func TestTRLBF16Cast(t *testing.T) {
	base := Options{Batch: 1, Seq: 512, Precision: "amp-bf16", Checkpointing: true, Attention: "flash", Accum: 1,
		PEFT: PEFTOptions{Method: "qlora", R: 16, Alpha: 16, Targets: "q_proj,v_proj"}, Quant: QuantOptions{Method: "nf4"}}
	for _, c := range []struct {
		md    *models.Model
		saved int64
	}{
		{llamaLike("untied", 1024, 2816, 4, 8, 8, 32000), 2 * 32000 * 1024 * 2},
		{func() *models.Model { m := llamaLike("tied", 1024, 2816, 4, 8, 8, 32000); m.Tied = true; return m }(), 32000 * 1024 * 2},
	} {
		cast := base
		cast.PEFT.TRLBF16Cast = true
		w0, _, err := WeightBytes(c.md, base)
		if err != nil {
			t.Fatal(err)
		}
		w1, _, err := WeightBytes(c.md, cast)
		if err != nil {
			t.Fatal(err)
		}
		if w0-w1 != c.saved {
			t.Errorf("%s: the cast saves %d weight bytes, want %d (embeddings and lm_head from fp32 to bf16)", c.md.Name, w0-w1, c.saved)
		}
		r0, err := Estimate(c.md, base)
		if err != nil {
			t.Fatal(err)
		}
		r1, err := Estimate(c.md, cast)
		if err != nil {
			t.Fatal(err)
		}
		if r1.PeakAllocatedBytes >= r0.PeakAllocatedBytes {
			t.Errorf("%s: peak %d with the cast, %d without: bf16 embeddings and lm_head must need less", c.md.Name, r1.PeakAllocatedBytes, r0.PeakAllocatedBytes)
		}
		noPrep, noPrepCast := base, cast
		noPrep.PEFT.NoKbitPrep, noPrepCast.PEFT.NoKbitPrep = true, true
		a, _, _ := WeightBytes(c.md, noPrep)
		b, _, _ := WeightBytes(c.md, noPrepCast)
		if a != b {
			t.Errorf("%s: without prepare_model_for_kbit_training the weights are bf16 already; the cast changed them by %d bytes", c.md.Name, a-b)
		}
	}
	md := llamaLike("m", 1024, 2816, 4, 8, 8, 32000)
	for _, bad := range []Options{
		{Batch: 1, Seq: 512, Precision: "bf16", PEFT: PEFTOptions{Method: "lora", TRLBF16Cast: true}},
		{Batch: 1, Seq: 512, Precision: "amp-fp16", Checkpointing: true, PEFT: PEFTOptions{Method: "qlora", TRLBF16Cast: true}},
	} {
		if _, err := Estimate(md, bad); err == nil {
			t.Errorf("--trl-bf16-cast with --peft %s --precision %s: want an error (TRL casts only a 4-bit model with bf16=True)", bad.PEFT.Method, bad.Precision)
		}
	}
}
