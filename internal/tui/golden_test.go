package tui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/supervisor"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the views")

// goldenDir is absolute: TestGoldenRunView changes directory.
var goldenDir, _ = filepath.Abs(filepath.Join("testdata", "golden"))

// golden compares text with testdata/golden/name, or writes it with -update.
func golden(t *testing.T, name, text string) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/tui -run Golden -update)", err)
	}
	if string(want) != text {
		t.Errorf("%s differs from the view (go test ./internal/tui -run Golden -update if intended):\n%s", name, text)
	}
}

// TestGoldenTop renders top's live view (model.View, as bubbletea draws
// it) over the captured DataLoader job with 6 workers at 80×24 and 200×50,
// in English and Chinese, after the keys people press first: none, ?
// (help), e (workers listed), s r (sort by RSS, smallest first), j j x
// (the second process selected, the signal question open).
func TestGoldenTop(t *testing.T) {
	scenes := []struct {
		name string
		keys []string
	}{
		{"start", nil},
		{"help", []string{"?"}},
		{"expand", []string{"e"}},
		{"sort", []string{"s", "r"}},
		{"signal", []string{"e", "j", "j", "x"}},
	}
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		for _, lang := range []string{"en", "zh"} {
			for _, sc := range scenes {
				m, _ := testModel(t, 6, sz[0], sz[1], lang, nil)
				for _, k := range sc.keys {
					m.Update(key(k))
				}
				text := m.View().Content
				lines := strings.Split(text, "\n")
				checkWidth(t, lines, sz[0])
				if len(lines) != sz[1] {
					t.Errorf("%v %s %s: %d lines", sz, lang, sc.name, len(lines))
				}
				golden(t, "top-"+size2(sz)+"-"+lang+"-"+sc.name+".txt", text+"\n")
			}
		}
	}
}

func size2(sz [2]int) string { return fmt.Sprintf("%dx%d", sz[0], sz[1]) }

// TestGoldenRunView renders run --tui's view of a job near its limit,
// with its process table (the fixture DataLoader job with 2 workers, as
// the supervisor's Live carries it: no cgroup or identity per job),
// events, a notice and the job's output, at both sizes and in both
// languages: as it opens, with the help open, and after e j j x (the
// workers listed, the first worker selected, the signal question open).
func TestGoldenRunView(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Chdir(t.TempDir()) // run --tui names the log relative to the job's directory
	const log = "torchmem-20261129-120000-ab12.log"
	var out strings.Builder
	for i := 1; i <= 40; i++ {
		out.WriteString("epoch 1 step " + strconv.Itoa(i) + " loss 0." + strconv.Itoa(100-i) + "\n")
	}
	os.WriteFile(log, []byte(out.String()), 0o644)
	at := time.Date(2026, 11, 29, 12, 0, 5, 0, time.Local)
	smp := fixtureSample(t, 2)
	for i := range smp.Jobs {
		smp.Jobs[i].Cgroup, smp.Jobs[i].Identity, smp.Jobs[i].CgroupHeadroomBytes = nil, nil, nil
	}
	scenes := []struct {
		name string
		keys []string
	}{{"", nil}, {"-help", []string{"?"}}, {"-signal", []string{"e", "j", "j", "x"}}}
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		for _, lang := range []string{"en", "zh"} {
			for _, sc := range scenes {
				tag := i18n.EN
				if lang == "zh" {
					tag = i18n.ZH
				}
				m := newRunModel("torchmem run 20261129-120000-ab12: python3 train.py --epochs 3", log, &SyncBuffer{}, tag)
				m.notices.Write([]byte("torchmem: warning: host-threshold: cgroup.usage_fraction = 91.0%\n"))
				m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				for i, u := range []int64{600, 700, 900, 1200, 1500, 1700, 1800, 1850} {
					u, l := u<<20, int64(2<<30)
					live := supervisor.Live{Parts: []string{"cgroup " + strconv.Itoa(int(u>>20)) + "M/2.0G", "step " + strconv.Itoa(i*5)}, Usage: &u, Limit: &l,
						Jobs: smp.Jobs}
					if i == 7 {
						live.Events = []store.Event{{Time: at, Source: "policy", Kind: "warn", Message: "cgroup usage above 90% of its limit"}}
					}
					m.Update(runLiveMsg{live: live})
				}
				m.Update(runTickMsg{})
				m.startOf = func(int) (uint64, error) { return 1, nil }
				for _, k := range sc.keys {
					m.Update(key(k))
				}
				name := "run-" + size2(sz) + "-" + lang + sc.name
				text := m.View().Content
				lines := strings.Split(text, "\n")
				checkWidth(t, lines, sz[0])
				golden(t, name+".txt", text+"\n")
			}
		}
	}
}
