package tui

import "testing"

// BenchmarkRender80 renders the fixture job with 32 DataLoader workers at
// 80 columns, folded: what the live view does every tick.
func BenchmarkRender80(b *testing.B) {
	smp := fixtureSample(b, 32)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Render(smp, ViewOptions{Width: 80})
	}
}

// BenchmarkRender200Expanded: every worker listed on a 200-column screen.
func BenchmarkRender200Expanded(b *testing.B) {
	smp := fixtureSample(b, 32)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Render(smp, ViewOptions{Width: 200, Expand: true})
	}
}
