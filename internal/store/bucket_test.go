package store

import (
	"encoding/json"
	"math"
	"math/rand"
	"testing"
	"time"
)

// samplesGoRef is Samples as it was before the bucketing moved into SQL:
// every row scanned into a Sample and merged in Go. It is the reference
// the SQL path must match.
func samplesGoRef(db *DB, id string, from, to time.Time, maxPoints int) ([]Sample, error) {
	sp, err := db.sampleSpan(id, from, to)
	if err != nil {
		return nil, err
	}
	rows, err := db.sql.Query(`SELECT `+sampleCols+` FROM samples WHERE run=? AND t_ms BETWEEN ? AND ? ORDER BY t_ms`, sp.run, sp.lo, sp.hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	w := sp.width(maxPoints)
	var out []Sample
	for rows.Next() {
		s, err := scanSample(rows)
		if err != nil {
			return nil, err
		}
		if w == 0 {
			out = append(out, s)
			continue
		}
		b := sp.t0 + (ms(s.Time)-sp.t0)/w*w
		if k := len(out) - 1; k >= 0 && ms(out[k].Time) == b {
			mergeSample(&out[k], s)
			continue
		}
		s.Time, s.Resolution = fromMS(b), max(w, s.Resolution)
		out = append(out, s)
	}
	return out, rows.Err()
}

// randSample has every series sometimes missing, GPU lists of varying
// length with holes, and Extra keys that come and go (NaN cannot be
// stored: that row's Extra is written as "").
func randSample(rng *rand.Rand, t time.Time) Sample {
	opt := func() *int64 {
		if rng.Intn(5) == 0 {
			return nil
		}
		return Int(rng.Int63n(1 << 40))
	}
	s := Sample{Time: t, CgroupUsage: opt(), HostAvailable: opt(), PSSTotal: opt(), RSSTotal: opt(), SwapTotal: opt(),
		AllocAllocated: opt(), AllocReserved: opt(), Step: opt()}
	list := func() []*int64 {
		l := make([]*int64, rng.Intn(4))
		for i := range l {
			l[i] = opt()
		}
		return l
	}
	if rng.Intn(4) > 0 {
		s.GPUUsed, s.GPUJobUsed = list(), list()
	}
	if rng.Intn(3) > 0 {
		s.Extra = map[string]float64{}
		for _, k := range []string{"alloc_retries", "alloc_ooms", "psi <some>", "é"} {
			if rng.Intn(2) == 0 {
				s.Extra[k] = rng.NormFloat64() * math.Pow(10, float64(rng.Intn(40)-20))
			}
		}
		if rng.Intn(50) == 0 {
			s.Extra["bad"] = math.NaN()
		}
	}
	return s
}

// The SQL bucketing gives, point for point, what the Go merge gave: over
// random rows, compacted tiers, sub-ranges and bucket counts.
func TestSamplesSQLMatchesGo(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	now := t0
	db := openTest(t, Options{Now: func() time.Time { return now }, FlushInterval: time.Hour,
		Tiers: []Tier{{After: time.Minute, Width: time.Second}, {After: 3 * time.Minute, Width: 10 * time.Second}}})
	rng := rand.New(rand.NewSource(1))
	var ids []string
	for run := 0; run < 2; run++ {
		r := &Run{Command: []string{"x"}, Start: t0}
		if err := db.CreateRun(r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
		ts := t0
		for i := 0; i < 4000; i++ {
			ts = ts.Add(time.Duration(rng.Intn(120)) * time.Millisecond) // some at the same millisecond
			if rng.Intn(500) == 0 {
				ts = ts.Add(time.Minute) // a gap
			}
			db.AppendSample(r.ID, randSample(rng, ts))
		}
	}
	now = t0.Add(8 * time.Minute)
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		for _, q := range []struct {
			from, to time.Time
			points   int
		}{
			{time.Time{}, time.Time{}, 1}, {time.Time{}, time.Time{}, 7}, {time.Time{}, time.Time{}, 300},
			{time.Time{}, time.Time{}, 1000}, {time.Time{}, time.Time{}, 100000}, {time.Time{}, time.Time{}, 0},
			{t0.Add(2 * time.Minute), t0.Add(5 * time.Minute), 50}, {t0.Add(4 * time.Minute), time.Time{}, 999},
			{time.Time{}, t0.Add(time.Second), 3},
		} {
			want, err := samplesGoRef(db, id, q.from, q.to, q.points)
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.Samples(id, q.from, q.to, q.points)
			if err != nil {
				t.Fatal(err)
			}
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			if len(want) == 0 || string(wj) != string(gj) {
				i, g, w := firstDiff(string(gj), string(wj))
				t.Fatalf("%+v: %d points, want %d, differ at %d\ngot  %s\nwant %s", q, len(got), len(want), i, g, w)
			}
		}
	}
}

func firstDiff(a, b string) (int, string, string) {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			lo := max(0, i-300)
			return i, a[lo:min(len(a), i+100)], b[lo:min(len(b), i+100)]
		}
	}
	return -1, "", ""
}

// extraFlat reads a stored Extra exactly as encoding/json does, or says it
// cannot (and merges nothing).
func FuzzExtraFlat(f *testing.F) {
	for _, s := range []string{`{"alloc_retries":3,"alloc_ooms":0}`, `{"a":-1.5e-300,"b":1e308}`, `{}`, `{"a":1,}`,
		`{"a":01}`, `{"a":1.}`, `{"a":NaN}`, `{"a":1e999}`, `{"a" :1}`, `{"a\"b":1}`, `{"é":2}`, `{"a":1,"a":2}`, `{"a":"x"}`, `x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := map[string]float64{}
		dup := false
		ok := extraFlat(s, func(k string, v float64) {
			if _, seen := got[k]; seen {
				dup = true
			}
			got[k] = v
		})
		if !ok {
			if len(got) > 0 {
				t.Fatalf("%q: rejected after merging %v", s, got)
			}
			return
		}
		var want map[string]float64
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("%q: read as %v, encoding/json: %v", s, got, err)
		}
		if dup {
			return // json keeps the last of equal keys; the writer never repeats one
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %v, encoding/json %v", s, got, want)
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || math.Float64bits(g) != math.Float64bits(v) {
				t.Fatalf("%q: %v, encoding/json %v", s, got, want)
			}
		}
	})
}
