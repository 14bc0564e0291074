package estimate

import "testing"

// BenchmarkPlanSearch70BQLoRA: the plan search for fine-tuning
// Llama-3.1-70B with QLoRA (4-bit base, seq 2048, effective batch 16) on
// one 80 GB GPU, where the job as given does not fit (issue 14: <= 2 s).
func BenchmarkPlanSearch70BQLoRA(b *testing.B) {
	md := benchModel(b, "meta-llama/Llama-3.1-70B")
	o := Options{Batch: 16, Seq: 2048, Precision: "bf16", Optimizer: "paged-adamw-8bit",
		PEFT: PEFTOptions{Method: "qlora", R: 16, Alpha: 32, Targets: "all-linear"}}
	budget := int64(80e9 * 0.95)
	var n int
	for b.Loop() {
		ps, err := Search(md, o, budget, PlanRequest{FineTune: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(ps.Combinations) == 0 {
			b.Fatal("no combination fits")
		}
		n = ps.Estimated
	}
	b.ReportMetric(float64(n), "estimates/op")
}
