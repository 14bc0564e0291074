package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/supervisor"
)

func TestRunView(t *testing.T) {
	log := filepath.Join(t.TempDir(), "job.log")
	os.WriteFile(log, []byte("epoch 1/2 loss 0.5\nepoch 2/2 loss 0.1\n"), 0o644)
	m := newRunModel("torchmem run abc: python3 train.py", log, &SyncBuffer{}, i18n.EN)
	m.notices.Write([]byte("torchmem: warning: host-threshold: cgroup.usage_fraction = 91.0%\n"))
	u, l := int64(1<<30), int64(2<<30)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	m.Update(runLiveMsg{live: supervisor.Live{Parts: []string{"cgroup 1G/2G (1G free)", "step 12"}, Usage: &u, Limit: &l,
		Events: []store.Event{{Time: time.Now(), Source: "policy", Kind: "warn", Message: "near the limit"}}}})
	m.Update(runTickMsg{})
	out := m.View().Content
	for _, want := range []string{"[" + strings.Repeat("#", 20) + strings.Repeat(".", 20) + "]", "step 12", "near the limit",
		"host-threshold", "epoch 2/2 loss 0.1", "q close (the job goes on)"} {
		if !strings.Contains(out, want) {
			t.Errorf("view lacks %q:\n%s", want, out)
		}
	}
}
