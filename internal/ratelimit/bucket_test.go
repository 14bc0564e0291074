package ratelimit

import (
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := New(2, 3) // 2 a second, burst 3
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{
		{0, true}, {0, true}, {0, true}, {0, false}, // the burst, then empty
		{400 * time.Millisecond, false}, // 0.8 token
		{500 * time.Millisecond, true},  // 1.0
		{500 * time.Millisecond, false},
		{-time.Second, false},    // backwards: nothing gained
		{10 * time.Second, true}, // refilled to the burst, no more
		{10 * time.Second, true}, {10 * time.Second, true}, {10 * time.Second, false},
	} {
		if got := b.Allow(t0.Add(c.at)); got != c.want {
			t.Fatalf("at %v: %v, want %v", c.at, got, c.want)
		}
	}
}
