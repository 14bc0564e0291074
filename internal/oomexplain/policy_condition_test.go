package oomexplain

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/i18n"
)

// A policy stop recorded with its metric, value and threshold words the
// condition in the reader's language (the metric name as written); one
// recorded before they were kept shows its English reason as it is.
func TestPolicyStopConditionInLanguage(t *testing.T) {
	term := 15
	ps := &PolicyStop{Rule: "leak-stop", Reason: "cgroup.time_to_oom = 7.5s (threshold 20.0s)", Signal: "SIGTERM",
		Metric: "cgroup.time_to_oom", Value: "7.5s", Threshold: "20.0s"}
	ev := RunEvidence{ExitCode: 143, Signal: &term, MainPID: 5, PolicyStop: ps}
	m := runVerdictMsg(ev, ExplainRun(ev), nil)
	if en := render(i18n.EN, m); !strings.Contains(en, "policy rule leak-stop (cgroup.time_to_oom = 7.5s (threshold 20.0s)) sent SIGTERM") {
		t.Errorf("en %q", en)
	}
	zh := render(i18n.ZH, m)
	if !strings.Contains(zh, "策略规则 leak-stop（cgroup.time_to_oom = 7.5s，阈值 20.0s）") || strings.Contains(zh, "threshold") {
		t.Errorf("zh %q", zh)
	}
	old := *ps
	old.Metric, old.Value, old.Threshold = "", "", ""
	ev.PolicyStop = &old
	if zh := render(i18n.ZH, runVerdictMsg(ev, ExplainRun(ev), nil)); !strings.Contains(zh, "（cgroup.time_to_oom = 7.5s (threshold 20.0s)）") {
		t.Errorf("an older run's reason: zh %q", zh)
	}
}
