package supervisor

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/store"
	"golang.org/x/text/language"
)

var updatePostmortem = flag.Bool("update", false, "rewrite testdata/postmortem-*.golden")

// TestPostmortemGolden: the post-mortem of a job the kernel OOM-killed in
// its cgroup (the kernel report of testdata/kernel-memcg-oom.txt, peaks
// and steps from the hook) as Print shows it, in English and in Chinese
// (testdata/postmortem-memcg.{en,zh}.golden; -update rewrites them). The
// summary's JSON is the same in both.
func TestPostmortemGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/kernel-memcg-oom.txt")
	if err != nil {
		t.Fatal(err)
	}
	one, nine, limit := uint64(1), 9, int64(200<<20)
	e := evidence{code: 137, sig: &nine, mainPID: 30640, dur: 83*time.Second + 400*time.Millisecond,
		kernel: strings.Split(strings.TrimSpace(string(b)), "\n"), limit: &limit,
		events: &cgroup.Events{OOMKill: &one, Max: &one}, jobPIDs: map[int]bool{30640: true}, cgroupRel: "/torchmem/run-1"}
	median := 0.1834
	build := func(lang language.Tag) Summary {
		s := classify(e)
		s.Peaks = store.Peaks{"cgroup_usage": 200 << 20, "rss_total": 196 << 20, "pss_total": 150 << 20}
		s.Steps, s.Hooked = 120, 1
		s.PerStep = &StepPeaks{Measured: true, AllocatedStep: 118, Allocated: 3 << 30, ReservedStep: 119, Reserved: 4 << 30, MedianStepTime: &median}
		s.localize(e, lang)
		return s
	}
	en, zh := build(i18n.EN), build(i18n.ZH)
	ej, _ := json.Marshal(en)
	zj, _ := json.Marshal(zh)
	if !bytes.Equal(ej, zj) {
		t.Errorf("the summary's JSON changes with the language")
	}
	// Read back from the history store (the JSON only), a summary shows
	// the Chinese the run stored, whatever language the run had.
	var stored Summary
	if err := json.Unmarshal(ej, &stored); err != nil || stored.ZH == nil {
		t.Fatalf("stored summary has no zh text: %v", err)
	}
	var back, live bytes.Buffer
	stored.PrintIn(&back, "20261201-0001", i18n.ZH)
	zh.Print(&live, "20261201-0001")
	if back.String() != live.String() {
		t.Errorf("zh from the store differs from the run's own zh:\n%s\n---\n%s", back.String(), live.String())
	}
	for name, s := range map[string]Summary{"en": en, "zh": zh} {
		var out bytes.Buffer
		s.Print(&out, "20261201-0001")
		path := filepath.Join("testdata", "postmortem-memcg."+name+".golden")
		if *updatePostmortem {
			if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -update)", err)
		}
		if !bytes.Equal(want, out.Bytes()) {
			t.Errorf("%s differs (go test -run TestPostmortemGolden -update to accept):\n%s", path, out.String())
		}
	}
}
