package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/policy"
)

// A policy rule's warning and stop notices are in the run's language on
// the terminal, with the metric name as written, while the stored event
// keeps the policy package's English (history is language-neutral).
func TestPolicyNoticesInRunLanguage(t *testing.T) {
	for _, tc := range []struct {
		lang          string
		warn, stop    string
		notEventWords string
	}{
		{"en", "torchmem: warning: leak-warn: cgroup.time_to_oom = 15.1s (threshold 60.0s)",
			"torchmem: stopping the job: leak-stop: cgroup.time_to_oom = 15.1s (threshold 20.0s)", "阈值"},
		{"zh", "torchmem：警告：leak-warn：cgroup.time_to_oom = 15.1s（阈值 60.0s）",
			"torchmem：停止作业：leak-stop：cgroup.time_to_oom = 15.1s（阈值 20.0s）", "阈值"},
	} {
		c := &fakeClock{}
		warn := policy.Rule{Name: "leak-warn", Metric: policy.CgroupTimeToOOM, Threshold: 60, Action: policy.Warn, Every: time.Hour}
		stop := policy.Rule{Name: "leak-stop", Metric: policy.CgroupTimeToOOM, Threshold: 20, Action: policy.Stop, Every: time.Hour}
		s, rec, notices := newClockSup(c, warn, stop)
		s.cfg.Lang = i18n.EN
		if tc.lang == "zh" {
			s.cfg.Lang = i18n.ZH
		}
		s.applyPolicy(c.now(), map[string]float64{policy.CgroupTimeToOOM: 15.1})
		out := notices.String()
		for _, want := range []string{tc.warn, tc.stop} {
			if !strings.Contains(out, want+"\n") {
				t.Errorf("%s: notices %q lack %q", tc.lang, out, want)
			}
		}
		if len(rec.events) != 2 {
			t.Fatalf("%s: %d events, want 2", tc.lang, len(rec.events))
		}
		if m := rec.events[0].Message; m != "leak-warn: cgroup.time_to_oom = 15.1s (threshold 60.0s)" || strings.Contains(m, tc.notEventWords) {
			t.Errorf("%s: stored event message %q, want the English", tc.lang, m)
		}
	}
}

// The budget notice reads in Chinese; its event keeps the English.
func TestBudgetNoticeChinese(t *testing.T) {
	b := runBudget{dropped: map[string]int64{"step": 3}}
	en := budgetNotice(nil, 2, b)
	zh := budgetNoticeIn(tr(i18n.ZH), nil, 2, b)
	if !strings.HasPrefix(en, "the job sent more than torchmem keeps; dropped: 2 hook message(s) cut to size; 3 step row(s)") {
		t.Errorf("en %q", en)
	}
	if !strings.HasPrefix(zh, "作业发来的数据超过 torchmem 保留的上限；已丢弃：2 条 hook 消息被截断；3 行 step 记录") {
		t.Errorf("zh %q", zh)
	}
}

// --numa auto's no-op notices go through the catalog: on a two-node host
// without GPUs the reason and the notice are both in the run's language.
func TestNUMANoticeChinese(t *testing.T) {
	sys := t.TempDir()
	for _, n := range []string{"node0", "node1"} {
		if err := os.MkdirAll(filepath.Join(sys, "devices/system/node", n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	nc, err := resolveNUMA("auto", sys, nil, "")
	if err != nil || nc.Node != -1 || nc.Notice != "numa.not_binding" {
		t.Fatalf("choice %+v, %v", nc, err)
	}
	for lang, want := range map[string]string{"en": "--numa auto: no GPU found, not binding", "zh": "--numa auto：没有找到 GPU，不绑定"} {
		tag := i18n.EN
		if lang == "zh" {
			tag = i18n.ZH
		}
		if got := nc.say(tr(tag)); got != want {
			t.Errorf("%s: %q, want %q", lang, got, want)
		}
	}
}
