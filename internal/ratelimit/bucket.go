// Package ratelimit is a token bucket driven by the caller's clock: every
// call passes the time, so the same code is tested without sleeping and
// follows an injected clock (hook.Options.Now) in production.
//
// Exported API:
//
//	New(perSecond float64, burst int) *Bucket
//	(*Bucket) Allow(now time.Time) bool
package ratelimit

import "time"

// Bucket holds up to burst tokens and gains perSecond tokens a second;
// each allowed event takes one. Not safe for concurrent use.
type Bucket struct {
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

// New returns a full bucket.
func New(perSecond float64, burst int) *Bucket {
	return &Bucket{rate: perSecond, burst: float64(burst), tokens: float64(burst)}
}

// Allow takes a token at now and reports whether there was one. A clock
// that goes backwards adds nothing.
func (b *Bucket) Allow(now time.Time) bool {
	if !b.last.IsZero() && now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	if b.last.IsZero() || now.After(b.last) {
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
