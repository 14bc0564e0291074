package web

import (
	"testing"

	"github.com/torchmem/torchmem/internal/metrics"
	"github.com/torchmem/torchmem/internal/store"
)

// The supervisor writes allocator retries under store's key; the metrics
// package reads them under its own copy of the name (it does not import the
// store). They must be the same string.
func TestAllocRetriesKeyAgrees(t *testing.T) {
	if metrics.ExtraAllocRetries != store.ExtraAllocRetries {
		t.Fatalf("metrics reads %q, supervisor writes %q", metrics.ExtraAllocRetries, store.ExtraAllocRetries)
	}
}
