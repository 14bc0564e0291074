package oomexplain

import (
	"strings"
	"testing"

	"golang.org/x/text/language"
)

// The post-mortem states the time-to-OOM projection made before the end,
// next to the measured time it came before the end, when the run ran out
// of memory or a rule acted on it; in either language.
func TestRunTimeToOOMNote(t *testing.T) {
	one, nine, limit := int64(1), 9, int64(1<<30)
	oom := RunEvidence{ExitCode: 137, Signal: &nine, MainPID: 5, CgroupPath: "/torchmem/run-1",
		CgroupOOMKills: &one, CgroupLimitBytes: &limit,
		TimeToOOM: &TimeToOOM{Resource: "cgroup", Seconds: 9.6, BytesPerSecond: 40 << 20, Before: 10.2}}
	rv := ExplainRun(oom)
	notes := strings.Join(rv.Notes, "\n")
	if want := "10.2s before the end, torchmem projected that the job's cgroup would reach its limit in ~9.6s at +40.00 MiB/s"; !strings.Contains(notes, want) {
		t.Errorf("notes %q lack %q", notes, want)
	}
	oom.Lang = language.Chinese
	if notes := strings.Join(ExplainRun(oom).Notes, "\n"); !strings.Contains(notes, "结束前 10.2s，torchmem 预测 作业的 cgroup 将在约 9.6s 后达到上限") {
		t.Errorf("zh notes %q", notes)
	}
	ok := RunEvidence{MainPID: 5, TimeToOOM: &TimeToOOM{Resource: "gpu1", Seconds: 200, BytesPerSecond: 1 << 20, Before: 90}}
	if notes := strings.Join(ExplainRun(ok).Notes, "\n"); strings.Contains(notes, "projected") {
		t.Errorf("a run that ended well shows a projection no rule acted on: %q", notes)
	}
	ok.TimeToOOM.Rule = "gpu-ttl"
	ok.ExitCode, ok.Signal = 143, intp(15)
	if notes := strings.Join(ExplainRun(ok).Notes, "\n"); !strings.Contains(notes, "1m30s before the end, torchmem projected that GPU 1 would reach its limit in ~3m20s at +1.00 MiB/s, and rule gpu-ttl acted on it") {
		t.Errorf("rule notes %q", notes)
	}
}

func intp(n int) *int { return &n }
