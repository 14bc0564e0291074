package report

import (
	"io"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/store"
)

// longRun is a run as `torchmem report` loads a long one: 4000 samples
// (the --points default; bucket maxima beyond), PSS every 5th, two GPUs,
// the 20000 newest steps over 8 ranks, and a handful of events.
func longRun() *Data {
	d := testData()
	t0 := d.Run.Start
	d.Samples = d.Samples[:0]
	for i := 0; i < 4000; i++ {
		u := int64(i) << 20
		s := store.Sample{Time: t0.Add(time.Duration(i) * time.Second), CgroupUsage: &u, RSSTotal: store.Int(u + 1<<30),
			HostAvailable: store.Int(20 << 30), AllocAllocated: store.Int(u / 2), AllocReserved: store.Int(u),
			GPUUsed: []*int64{store.Int(u * 3), store.Int(u * 2)}, GPUJobUsed: []*int64{store.Int(u), store.Int(u)}}
		if i%5 == 0 {
			s.PSSTotal = store.Int(u + 1<<29)
		}
		d.Samples = append(d.Samples, s)
	}
	d.Steps = d.Steps[:0]
	for i := 0; i < 20000; i++ {
		rank, sec := i%8, 0.5
		d.Steps = append(d.Steps, store.Step{Time: t0.Add(time.Duration(i) * 200 * time.Millisecond), Step: int64(i / 8), PID: 100 + rank, Rank: &rank,
			StepSeconds: &sec, StepPeakAllocated: store.Int(int64(i) << 10), StepPeakReserved: store.Int(int64(i) << 11)})
	}
	for i := 0; i < 10; i++ {
		d.Events = append(d.Events, store.Event{Time: t0.Add(time.Duration(i*400) * time.Second), Kind: "warn", Source: "policy", Message: "warning"})
	}
	return d
}

// BenchmarkWriteHTMLLongRun: the report of a long run (bench/results/report-charts.md).
func BenchmarkWriteHTMLLongRun(b *testing.B) {
	d := longRun()
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteHTML(io.Discard, d, i18n.EN); err != nil {
			b.Fatal(err)
		}
	}
}
