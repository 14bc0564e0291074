package oomexplain

import (
	"strings"
	"testing"
)

func TestParseAllCountsDropped(t *testing.T) {
	// The same CUDA OOM as testdata/cuda/cuda-oom-fragmentation-message.txt,
	// from five processes (distinct rank prefixes, so none is a repeat).
	msg := strings.TrimSpace(readTestdata(t, "cuda/cuda-oom-fragmentation-message.txt"))
	var b strings.Builder
	for r := 0; r < 5; r++ {
		for _, l := range strings.Split(msg, "\n") {
			b.WriteString("[rank" + string(rune('0'+r)) + "]: " + l + "\n")
		}
		b.WriteString("step 1 | loss 2.41\n")
	}
	res, err := ParseAll(strings.NewReader(b.String()), Options{MaxIncidents: 2})
	if err != nil || len(res.Incidents) != 2 || res.Dropped != 3 {
		t.Fatalf("%d incidents, %d dropped, %v", len(res.Incidents), res.Dropped, err)
	}
	all, _ := ParseAll(strings.NewReader(b.String()), Options{})
	if len(all.Incidents) != 5 || all.Dropped != 0 {
		t.Errorf("default cap: %d kept, %d dropped", len(all.Incidents), all.Dropped)
	}
}
