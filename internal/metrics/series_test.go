package metrics

import (
	"strconv"
	"testing"
	"time"
)

// TestSeriesBudget: the budget counts label sets created, not alive: a
// worker that ends frees nothing; past the bound new keys are refused
// (one notice), known ones go on; a new window starts with those alive.
func TestSeriesBudget(t *testing.T) {
	var notices []string
	b := newSeriesBudget(10, time.Hour, func(n string) { notices = append(notices, n) })
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	keys := func(from, n int) []string {
		var k []string
		for i := 0; i < n; i++ {
			k = append(k, "job\x00"+strconv.Itoa(from+i))
		}
		return k
	}
	count := func(ok []bool) (n int) {
		for _, v := range ok {
			if v {
				n++
			}
		}
		return n
	}
	if n := count(b.admit(t0, keys(0, 4))); n != 4 {
		t.Fatalf("first 4: %d admitted", n)
	}
	// Workers restart: 4 new PIDs each epoch; only 10 may ever be created.
	if n := count(b.admit(t0.Add(time.Minute), keys(4, 4))); n != 4 {
		t.Fatalf("epoch 2: %d", n)
	}
	ok := b.admit(t0.Add(2*time.Minute), append(keys(0, 1), keys(8, 4)...)) // main (known) + 4 new
	if !ok[0] || count(ok) != 3 {
		t.Fatalf("epoch 3: %v, want the known key and 2 new", ok)
	}
	if created, capped := b.stats(); created != 10 || !capped || len(notices) != 1 {
		t.Fatalf("created %d capped %v notices %v", created, capped, notices)
	}
	b.admit(t0.Add(3*time.Minute), keys(20, 4))
	if len(notices) != 1 {
		t.Errorf("notice repeated: %v", notices)
	}
	// A new window: the alive ones continue, the budget is fresh.
	ok = b.admit(t0.Add(time.Hour+3*time.Minute), append(keys(0, 1), keys(30, 12)...))
	if !ok[0] || count(ok) != 10 {
		t.Errorf("new window: %d admitted", count(ok))
	}
	if _, capped := b.stats(); !capped || len(notices) != 2 {
		t.Errorf("second window not capped/noticed: %v", notices)
	}
}
