package supervisor

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/cgroup"
	"golang.org/x/text/language"
)

// TestSummaryLang: Print shows the post-mortem in Config.Lang while the
// summary kept with the run (its JSON) is the same in every language:
// English, with the Chinese beside it (zh).
func TestSummaryLang(t *testing.T) {
	b, err := os.ReadFile("testdata/kernel-memcg-oom.txt")
	if err != nil {
		t.Fatal(err)
	}
	one, nine, limit := uint64(1), 9, int64(200<<20)
	e := evidence{code: 137, sig: &nine, mainPID: 30640, kernel: strings.Split(strings.TrimSpace(string(b)), "\n"),
		limit: &limit, events: &cgroup.Events{OOMKill: &one}, jobPIDs: map[int]bool{30640: true}, cgroupRel: "/torchmem/run-1"}
	en := classify(e)
	en.localize(e, language.English) // as finish does for every run: the Chinese is stored either way
	zh := classify(e)
	zh.localize(e, language.Chinese)
	ej, _ := json.Marshal(en)
	zj, _ := json.Marshal(zh)
	if string(ej) != string(zj) {
		t.Errorf("the summary's JSON changes with the language:\nen %s\nzh %s", ej, zj)
	}
	var ep, zp bytes.Buffer
	en.Print(&ep, "r1")
	zh.Print(&zp, "r1")
	if !strings.Contains(ep.String(), "killed by the kernel OOM killer") {
		t.Errorf("English post-mortem:\n%s", ep.String())
	}
	for _, want := range []string{"被内核 OOM killer 杀死：作业的 cgroup 达到了 200.00 MiB 的限制", "内存 cgroup"} {
		if !strings.Contains(zp.String(), want) {
			t.Errorf("Chinese post-mortem lacks %q:\n%s", want, zp.String())
		}
	}
	if zh.Verdict != en.Verdict {
		t.Errorf("the kept verdict changed: %q", zh.Verdict)
	}
}
