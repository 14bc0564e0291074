package store

import (
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

// BenchmarkSamplesDownsampled reads a 10 Hz hour as 1000 points.
func BenchmarkSamplesDownsampled(b *testing.B) {
	db, err := Open(filepath.Join(b.TempDir(), "b.db"), Options{FlushInterval: time.Hour, Tiers: []Tier{}})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	r := &Run{Command: []string{"bench"}}
	db.CreateRun(r)
	t0 := time.Now()
	for i := 0; i < 36000; i++ {
		db.AppendSample(r.ID, benchSample(t0.Add(time.Duration(i)*100*time.Millisecond), int64(i)))
	}
	db.Flush()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pts, err := db.Samples(r.ID, time.Time{}, time.Time{}, 1000)
		if err != nil || len(pts) > 1000 {
			b.Fatal(len(pts), err)
		}
	}
}
