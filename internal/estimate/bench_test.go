package estimate

import (
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

func benchModel(b *testing.B, name string) *models.Model {
	m, err := models.Preset(name)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkEstimateLlama8B: one estimate (3 steps replayed) of a 32-layer model.
func BenchmarkEstimateLlama8B(b *testing.B) {
	md := benchModel(b, "meta-llama/Llama-3.1-8B")
	for b.Loop() {
		if _, err := Estimate(md, Options{Batch: 4, Seq: 4096, Precision: "amp-bf16"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanGPT2: estimate + largest batch + levers on a GPU.
func BenchmarkPlanGPT2(b *testing.B) {
	md := benchModel(b, "gpt2")
	g, _ := LookupGPU("H100-80GB")
	for b.Loop() {
		if _, _, err := Plan(md, Options{Batch: 8, Seq: 1024, Precision: "amp-bf16"}, g, 0.05); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanGeneration8B: a long generation replays every token for
// each of the bisection's estimates.
func BenchmarkPlanGeneration8B(b *testing.B) {
	md := benchModel(b, "meta-llama/Llama-3.1-8B")
	g, _ := LookupGPU("H200")
	o := Options{Batch: 8, Seq: 4096, GenLen: 2048, Inference: true, Precision: "bf16"}
	for b.Loop() {
		if _, _, err := Plan(md, o, g, 0.05); err != nil {
			b.Fatal(err)
		}
	}
}
