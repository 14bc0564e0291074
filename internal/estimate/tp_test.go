package estimate

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// TestTPShardsTheWeights: with --tp 8 a Llama-3.1-70B rank holds an eighth
// of the weights (everything but the replicated norms is split).
func TestTPShardsTheWeights(t *testing.T) {
	md := moePreset(t, "Llama-3.1-70B")
	r, err := Estimate(md, Options{Batch: 1, Seq: 1024, Precision: "bf16", Inference: true, NoLoadFP32: true, TP: 8})
	if err != nil {
		t.Fatal(err)
	}
	if r.Params != md.ParamCount() {
		t.Errorf("params %d, want the whole model's %d", r.Params, md.ParamCount())
	}
	want := 2 * md.ParamCount() / 8
	if w := itemBytes(r, "weights"); w < want || w > want+want/100 {
		t.Errorf("weights per GPU %d, want about %d", w, want)
	}
	if r.Opts.WorldSize != 8 {
		t.Errorf("world size %d, want the TP group's 8", r.Opts.WorldSize)
	}
}

// TestTPActivations: without sequence parallelism a rank keeps the
// residual stream whole and 1/TP of the rest; with it, about 1/TP of
// everything (Korthikanti et al. 2022, eq. 4-5: 34sbh/t with SDPA).
func TestTPActivations(t *testing.T) {
	md := moePreset(t, "Llama-3.1-8B")
	md.Layers = 2
	per := func(tp int, sp bool) int64 {
		r, err := Estimate(md, Options{Batch: 2, Seq: 2048, Precision: "bf16", TP: tp, SequenceParallel: sp})
		if err != nil {
			t.Fatal(err)
		}
		return r.ActivationBytesPerBlock
	}
	one, tp4, sp4 := per(1, false), per(4, false), per(4, true)
	if !(sp4 < tp4 && tp4 < one) {
		t.Fatalf("per block: tp1 %d, tp4 %d, tp4+sp %d: want decreasing", one, tp4, sp4)
	}
	if d := float64(sp4) / float64(one/4); d < 0.9 || d > 1.1 {
		t.Errorf("tp4+sp keeps %d per block, want about a quarter of %d (ratio %.2f)", sp4, one, d)
	}
}

// TestTPWithZeRO: ZeRO shards over the data-parallel group (world / TP).
func TestTPWithZeRO(t *testing.T) {
	md := moePreset(t, "Llama-3.1-8B")
	md.Layers = 2
	states := func(tp, world int) int64 {
		r, err := Estimate(md, Options{Batch: 1, Seq: 256, Precision: "bf16", TP: tp, WorldSize: world, ZeroStage: 1})
		if err != nil {
			t.Fatal(err)
		}
		return itemBytes(r, "optimizer_states")
	}
	// tp 2 over 8 GPUs: 4-way ZeRO of a half model = 1/8 of the states,
	// as 8-way ZeRO of the whole model.
	a, b := states(2, 8), states(1, 8)
	if d := float64(a) / float64(b); d < 0.97 || d > 1.03 {
		t.Errorf("optimizer states tp2 x dp4 %d vs dp8 %d", a, b)
	}
}

func TestTPRefusals(t *testing.T) {
	llama := moePreset(t, "Llama-3.1-8B")
	gpt2 := moePreset(t, "gpt2")
	for _, c := range []struct {
		md   *models.Model
		o    Options
		want string
	}{
		{llama, Options{Seq: 128, TP: 3}, "does not divide the 32 attention heads"},
		{llama, Options{Seq: 128, TP: 4, WorldSize: 6}, "not a multiple of --tp 4"},
		{llama, Options{Seq: 128, SequenceParallel: true}, "--sequence-parallel needs --tp"},
		{gpt2, Options{Seq: 128, TP: 2}, "not gpt2"},
		{llama, Options{Seq: 128, ExpertCapacity: -1}, "--expert-capacity"},
	} {
		_, err := Estimate(c.md, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.o, err, c.want)
		}
	}
}

// TestTPMoE: the experts' widths are split too.
func TestTPMoE(t *testing.T) {
	md := moePreset(t, "Mixtral-8x7B-v0.1")
	r, err := Estimate(md, Options{Batch: 1, Seq: 512, Precision: "bf16", Inference: true, NoLoadFP32: true, TP: 8})
	if err != nil {
		t.Fatal(err)
	}
	want := 2 * md.ParamCount() / 8
	if w := itemBytes(r, "weights"); w < want || w > want+want/100 {
		t.Errorf("weights per GPU %d, want about %d", w, want)
	}
}
