package oomexplain

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/language"
)

// zhCorpus are corpus excerpts whose Chinese explanations are pinned in
// testdata/golden-zh: one of each common verdict.
var zhCorpus = []string{
	"cuda/017-2.1-capacty-fragmentation-3090.txt",                      // fragmentation
	"cuda/020-2.2-backward-16g.txt",                                    // does_not_fit
	"kernel/005-docker-compose-memcg-child-killed.txt",                 // cgroup_limit
	"kernel/029-el7-1160-memcg-then-second-event-header.txt",           // cgroup v1 (CentOS 7), memory+swap lines
	"kernel/042-podman-kind-cgroupv2-memory-stat-multiline.txt",        // cgroup v2, memory.stat
	"kernel/019-dmesg-T-python-wrapped-rows-commas.txt",                // host_exhausted
	"host/002-py38-worker-killed-chained.txt",                          // a DataLoader worker killed
	"host/043-autovod-shell-killed-with-dmesg-T-global-oom-commas.txt", // killed_by_kernel_oom
}

// TestGoldenZH renders the excerpts in Chinese (run with -update after an
// intended change and review the diff), and checks that only the text
// changes with the language: verdicts, alternatives, message ids and
// arguments, advice ids and the parsed fields are the same as in English.
func TestGoldenZH(t *testing.T) {
	for _, name := range zhCorpus {
		t.Run(name, func(t *testing.T) {
			en := parseCorpusIn(t, name, language.English)
			zh := parseCorpusIn(t, name, language.Chinese)
			sameButText(t, en, zh)
			var sb strings.Builder
			for i := range zh {
				noBadVerbs(t, name, zh[i].Explanation)
				writeExplanation(&sb, fmt.Sprintf("incident %d: %s", i+1, zh[i].Kind), zh[i].Explanation)
			}
			checkGoldenText(t, filepath.Base(name), sb.String())
		})
	}
}

// TestGoldenZHRun pins the Chinese post-mortem of a run whose main
// process the job's cgroup killed after its memory leaked step by step.
func TestGoldenZHRun(t *testing.T) {
	nine, limit, kills := 9, int64(8<<30), int64(1)
	ev := RunEvidence{ExitCode: 137, Signal: &nine, MainPID: 500, JobPIDs: []int{500, 612}, HookedPIDs: []int{500, 612},
		Workers: []int{612}, CgroupPath: "/torchmem/run-abc", CgroupLimitBytes: &limit, CgroupOOMKills: &kills,
		Growth: &Growth{BytesPerStep: 48 << 20, FromStep: 20, ToStep: 160, R2: 0.98},
		KernelLines: []string{
			"python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
			"memory: usage 8388608kB, limit 8388608kB, failcnt 412",
			"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/torchmem/run-abc,task_memcg=/torchmem/run-abc,task=python3,pid=500,uid=0",
			"Memory cgroup out of memory: Killed process 500 (python3) total-vm:9229608kB, anon-rss:6204160kB, file-rss:6516kB, shmem-rss:1048576kB, UID:0 pgtables:456kB oom_score_adj:0",
		}}
	en := ExplainRun(ev)
	ev.Lang = language.Chinese
	zh := ExplainRun(ev)
	if en.Cause != zh.Cause || en.Exception != zh.Exception || !jsonEqual(en.Victims, zh.Victims) || !jsonEqual(en.KernelLines, zh.KernelLines) {
		t.Errorf("the run's facts change with the language:\nen %+v\nzh %+v", en, zh)
	}
	if en.Verdict == zh.Verdict {
		t.Errorf("verdict not translated: %q", zh.Verdict)
	}
	sameButText(t, en.Incidents, zh.Incidents)
	var sb strings.Builder
	fmt.Fprintf(&sb, "cause: %s\nverdict: %s\n", zh.Cause, zh.Verdict)
	writeList(&sb, "notes", zh.Notes)
	writeList(&sb, "recommendations", zh.Recommendations)
	for i := range zh.Incidents {
		writeExplanation(&sb, fmt.Sprintf("incident %d: %s", i+1, zh.Incidents[i].Kind), zh.Incidents[i].Explanation)
	}
	checkGoldenText(t, "run-cgroup-oom-kill-leak", sb.String())
}

func parseCorpusIn(t *testing.T, name string, lang language.Tag) []Incident {
	t.Helper()
	incs := parseCorpusFile(t, name) // explained in English; again in lang
	ExplainAll(incs, Context{Lang: lang})
	return incs
}

// sameButText fails when en and zh differ in anything but the rendered
// text (summary, arithmetic, recommendations, advice text and because),
// or when the text is not translated.
func sameButText(t *testing.T, en, zh []Incident) {
	t.Helper()
	if len(en) != len(zh) {
		t.Fatalf("%d incidents in English, %d in Chinese", len(en), len(zh))
	}
	for i := range en {
		if en[i].Explanation.Summary == zh[i].Explanation.Summary {
			t.Errorf("[%d] summary not translated: %q", i, zh[i].Explanation.Summary)
		}
		if a, b := withoutText(en[i]), withoutText(zh[i]); a != b {
			t.Errorf("[%d] more than the text changes with the language:\nen %s\nzh %s", i, a, b)
		}
	}
}

// withoutText is inc's JSON with the explanation's rendered text removed.
func withoutText(inc Incident) string {
	e := *inc.Explanation
	e.Summary, e.Arithmetic, e.Recommendations = "", nil, nil
	e.Advice = append([]Advice(nil), e.Advice...)
	for i := range e.Advice {
		e.Advice[i].Text, e.Advice[i].Because = "", ""
	}
	// Messages hold ids and arguments (sentences nested as messages, not
	// as rendered text): they are the same in every language.
	inc.Explanation = &e
	out, _ := json.Marshal(inc)
	return string(out)
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func writeExplanation(sb *strings.Builder, head string, e *Explanation) {
	fmt.Fprintf(sb, "\n== %s (verdict %s", head, e.Verdict)
	if len(e.Alternatives) > 0 {
		fmt.Fprintf(sb, "; alternatives %s", verdictList(e.Alternatives))
	}
	fmt.Fprintf(sb, ")\nsummary: %s\n", e.Summary)
	writeList(sb, "arithmetic", e.Arithmetic)
	if len(e.Advice) > 0 {
		sb.WriteString("recommendations:\n")
	}
	for _, a := range e.Advice {
		fmt.Fprintf(sb, "  - %s\n", a.Text)
		if a.Because != "" {
			fmt.Fprintf(sb, "    (%s)\n", a.Because)
		}
	}
}

func writeList(sb *strings.Builder, head string, xs []string) {
	if len(xs) == 0 {
		return
	}
	sb.WriteString(head + ":\n")
	for _, x := range xs {
		fmt.Fprintf(sb, "  - %s\n", x)
	}
}

// checkGoldenText compares got with testdata/golden-zh/NAME.txt (-update
// rewrites it).
func checkGoldenText(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", "golden-zh", strings.TrimSuffix(name, ".txt")+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGoldenZH -update)", err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (run with -update and review the diff):\n%s", golden, got)
	}
}
