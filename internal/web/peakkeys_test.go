package web

import (
	"regexp"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/store"
)

// The run pages name peaks by their stored keys (run.js cannot import
// store's constants): every key they compare with, and the prefix of the
// allocator's peaks, must be one the supervisor writes.
func TestDashboardPeakKeys(t *testing.T) {
	b, err := static.ReadFile("static/run.js")
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	keys := regexp.MustCompile(`k === "([a-z0-9_]+)"`).FindAllStringSubmatch(js, -1)
	if len(keys) == 0 {
		t.Fatal("run.js compares no peak key: update this test")
	}
	for _, m := range keys {
		if !store.KnownPeakKey(m[1]) {
			t.Errorf("run.js names peak %q, not a store.PeakKey", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`k\.startsWith\("([a-z0-9_]+)"\)`).FindAllStringSubmatch(js, -1) {
		if !strings.HasPrefix(string(store.PeakAllocPeakAllocated), m[1]) || !strings.HasPrefix(string(store.PeakAllocPeakReserved), m[1]) {
			t.Errorf("run.js's prefix %q is not the allocator peaks'", m[1])
		}
	}
	// run.js's GPU pattern, the same in Go's syntax: whole devices only.
	const gpuUsed = `^gpu\d+_used$`
	re := regexp.MustCompile(gpuUsed)
	if !strings.Contains(js, "/"+gpuUsed+"/") || !re.MatchString(string(store.PeakGPUUsed(3))) || re.MatchString(string(store.PeakGPUJobUsed(3))) {
		t.Errorf("run.js's GPU peaks are not %s, store.PeakGPUUsed's keys", gpuUsed)
	}
}
