package store

import (
	"testing"
	"time"
)

func TestCompactionTiers(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	now := t0
	db := openTest(t, Options{Now: func() time.Time { return now }, FlushInterval: time.Hour,
		Tiers: []Tier{{After: time.Minute, Width: time.Second}, {After: 10 * time.Minute, Width: 10 * time.Second}}})
	r := &Run{Command: []string{"x"}}
	if err := db.CreateRun(r); err != nil {
		t.Fatal(err)
	}
	// 20 minutes at 10 Hz, usage = i, host available = -i.
	n := 20 * 60 * 10
	for i := 0; i < n; i++ {
		ts := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		db.AppendSample(r.ID, Sample{Time: ts, CgroupUsage: Int(int64(i)), HostAvailable: Int(int64(-i))})
		if i%10 == 0 {
			db.AppendStep(r.ID, Step{Time: ts, Step: int64(i / 10), PID: 1, Steps: 1})
			db.AppendStep(r.ID, Step{Time: ts.Add(50 * time.Millisecond), Step: int64(i/10) + 1, PID: 1, Steps: 1})
		}
	}
	now = t0.Add(20 * time.Minute)
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	for pass := 0; pass < 2; pass++ { // a second pass must change nothing
		if err := db.compactActive(false); err != nil {
			t.Fatal(err)
		}
	}
	all, err := db.Samples(r.ID, time.Time{}, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 0-10 min: 60 buckets of 10 s; 10-19 min: 540 buckets of 1 s; last minute raw: 600.
	if want := 60 + 540 + 600; len(all) != want {
		t.Fatalf("%d rows after compaction, want %d", len(all), want)
	}
	if all[0].Resolution != 10000 || *all[0].CgroupUsage != 99 || *all[0].HostAvailable != -99 {
		t.Fatalf("first bucket %+v", all[0])
	}
	if b := all[60]; b.Resolution != 1000 || *b.CgroupUsage != 6009 || b.Time != t0.Add(10*time.Minute) {
		t.Fatalf("first 1 s bucket %+v", b)
	}
	if last := all[len(all)-1]; last.Resolution != 0 || *last.CgroupUsage != int64(n-1) {
		t.Fatalf("last row %+v", last)
	}
	steps, _ := db.Steps(r.ID, 0)
	if want := 60 + 540 + 2*60; len(steps) != want {
		t.Fatalf("%d step rows, want %d", len(steps), want)
	}
	if s := steps[0]; s.Steps != 20 || s.Step != 10 {
		t.Fatalf("first step bucket %+v", s)
	}
}
