package estimate

import (
	"testing"
)

func TestParseTransformersVersion(t *testing.T) {
	for _, c := range []struct {
		in   string
		want version
		set  bool
		ok   bool
	}{
		{"", version{}, false, true},
		{"4.48", version{4, 48}, true, true},
		{"4.48.1", version{4, 48}, true, true},
		{"4.49.0.dev0", version{4, 49}, true, true},
		{"5.17.0", version{5, 17}, true, true},
		{"4", version{}, false, false},
		{"4.x", version{}, false, false},
		{"v4.48", version{}, false, false},
		{"-1.2", version{}, false, false},
	} {
		v, set, err := parseVersion(c.in)
		if (err == nil) != c.ok || v != c.want || set != c.set {
			t.Errorf("%q: %v %v %v, want %v %v ok=%v", c.in, v, set, err, c.want, c.set, c.ok)
		}
	}
}

// TestLossLayoutByVersion: the versions where transformers' causal-LM loss
// changed (PR 34191 in 4.46, PR 35646 in 4.49; GPT-2 took ForCausalLMLoss
// in 4.49).
func TestLossLayoutByVersion(t *testing.T) {
	for _, c := range []struct {
		v          string
		llama, gpt lossLayout
	}{
		{"", lossAsIs, lossAsIs},
		{"4.36.2", lossShiftInModel, lossShiftNoUpcast},
		{"4.45.2", lossShiftInModel, lossShiftNoUpcast},
		{"4.46.0", lossShiftInLoss, lossShiftNoUpcast},
		{"4.48.1", lossShiftInLoss, lossShiftNoUpcast},
		{"4.49.0", lossAsIs, lossAsIs},
		{"5.17.0", lossAsIs, lossAsIs},
	} {
		v, set, err := parseVersion(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if got := causalLossLayout(v, set); got != c.llama {
			t.Errorf("%s: Llama layout %d, want %d", c.v, got, c.llama)
		}
		if got := gpt2LossLayout(v, set); got != c.gpt {
			t.Errorf("%s: GPT-2 layout %d, want %d", c.v, got, c.gpt)
		}
	}
}

// TestShiftedLogitsCopy: with a large vocabulary the loss sets the peak.
// With the current loss it is the start of backward: the saved
// log-probabilities and the two fp32 loss gradients, 12 bytes a logit.
// transformers 4.46-4.48's ForCausalLMLoss holds, when log_softmax runs,
// the model's bf16 logits, their fp32 upcast, the shifted fp32 copy and
// the log-probabilities over b x (s-1) rows: 2T + 4T + 8(T-b) bytes a
// vocabulary entry, so the peak moves to the loss and grows by
// (2T - 8b) x V bytes: about one bf16 logits tensor, what the
// fms-acceleration 2025 rows showed (bench/results/estimate-peft.md).
// 4.45's upcast in the forward frees the bf16 logits: less than 4.48.
func TestShiftedLogitsCopy(t *testing.T) {
	md := llamaLike("big-vocab", 512, 1024, 2, 8, 8, 128000)
	b, s := 4, 512
	peak := func(v string) (int64, string) {
		r, err := Estimate(md, Options{Batch: b, Seq: s, Precision: "bf16", Transformers: v})
		if err != nil {
			t.Fatal(err)
		}
		return r.PeakAllocatedBytes, r.PeakPhase
	}
	now, phase := peak("")
	v48, phase48 := peak("4.48")
	v45, _ := peak("4.45")
	T, V := int64(b*s), int64(128000)
	want := (2*T - 8*int64(b)) * V
	t.Logf("peak: current %d (%s), 4.48 %d (%s), 4.45 %d", now, phase, v48, phase48, v45)
	if d := v48 - now; d < want*99/100 || d > want*101/100 {
		t.Errorf("4.48 holds %d bytes more at the peak, want about %d", d, want)
	}
	if v45 >= v48 {
		t.Errorf("4.45 (half-precision logits freed by the upcast) %d, 4.48 %d: want less", v45, v48)
	}
}
