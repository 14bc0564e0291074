package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func benchSample(t time.Time, i int64) Sample {
	return Sample{Time: t, CgroupUsage: Int(8<<30 + i*4096), HostAvailable: Int(200<<30 - i*4096), PSSTotal: Int(7<<30 + i),
		RSSTotal: Int(7<<30 + 2*i), AllocAllocated: Int(30<<30 + i*512), AllocReserved: Int(40 << 30), Step: Int(i / 10),
		GPUUsed: []*int64{Int(41<<30 + i), Int(41<<30 + i)}, GPUJobUsed: []*int64{Int(40<<30 + i), Int(40<<30 + i)}}
}

// BenchmarkAppendFlush: one sample appended per op, flushed every 10 (a
// 10 Hz sampler flushing once a second).
func BenchmarkAppendFlush(b *testing.B) {
	db, err := Open(filepath.Join(b.TempDir(), "b.db"), Options{FlushInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	r := &Run{Command: []string{"bench"}}
	db.CreateRun(r)
	t0 := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.AppendSample(r.ID, benchSample(t0.Add(time.Duration(i)*100*time.Millisecond), int64(i)))
		if i%10 == 9 {
			if err := db.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSamplesDownsampled reads a 10 Hz hour (36,000 rows, two GPUs)
// as 1000 points; extra: each row also holds the supervisor's Extra
// (allocator counters); go: the row-by-row Go merge Samples used before
// (samplesGoRef), for comparison.
func BenchmarkSamplesDownsampled(b *testing.B) {
	for _, extra := range []bool{false, true} {
		db, id := benchStore(b, 36000, extra)
		for _, path := range []string{"sql", "go"} {
			name := path
			if extra {
				name += "/extra"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					var pts []Sample
					var err error
					if path == "sql" {
						pts, err = db.Samples(id, time.Time{}, time.Time{}, 1000)
					} else {
						pts, err = samplesGoRef(db, id, time.Time{}, time.Time{}, 1000)
					}
					if err != nil || len(pts) > 1000 {
						b.Fatal(len(pts), err)
					}
				}
			})
		}
	}
}

func benchStore(b *testing.B, n int, extra bool) (*DB, string) {
	db, err := Open(filepath.Join(b.TempDir(), "b.db"), Options{FlushInterval: time.Hour, Tiers: []Tier{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	r := &Run{Command: []string{"bench"}}
	db.CreateRun(r)
	t0 := time.Now()
	for i := 0; i < n; i++ {
		s := benchSample(t0.Add(time.Duration(i)*100*time.Millisecond), int64(i))
		if extra {
			s.Extra = map[string]float64{ExtraAllocRetries: float64(i / 1000), ExtraAllocOOMs: float64(i / 9000)}
		}
		db.AppendSample(r.ID, s)
		if i%50000 == 49999 { // the append buffer holds at most maxPending rows
			if err := db.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := db.Flush(); err != nil {
		b.Fatal(err)
	}
	if got, err := db.Run(r.ID); err != nil || got.Samples != int64(n) {
		b.Fatalf("store holds %v rows, want %d (%v)", got, n, err)
	}
	return db, r.ID
}

// BenchmarkSamplesDay is the case serve hit: a 24 h 10 Hz run (864,000
// rows) read as 1000 points. Building the store takes a while, so it runs
// only with TORCHMEM_BENCH_DAY=1.
func BenchmarkSamplesDay(b *testing.B) {
	if os.Getenv("TORCHMEM_BENCH_DAY") == "" {
		b.Skip("set TORCHMEM_BENCH_DAY=1 to build an 864,000-row store")
	}
	db, id := benchStore(b, 864000, true)
	for _, path := range []string{"sql", "go"} {
		b.Run(path, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				read := db.Samples
				if path == "go" {
					read = func(id string, from, to time.Time, n int) ([]Sample, error) { return samplesGoRef(db, id, from, to, n) }
				}
				if pts, err := read(id, time.Time{}, time.Time{}, 1000); err != nil || len(pts) > 1000 {
					b.Fatal(len(pts), err)
				}
			}
		})
	}
}
