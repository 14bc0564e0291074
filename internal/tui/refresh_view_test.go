package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// TestRefreshKeepsLastGoodView: a failed fetch (Prometheus restarting)
// shows its error above the last good lines and the view keeps
// refreshing; q quits, esc does not.
func TestRefreshKeepsLastGoodView(t *testing.T) {
	answers := []error{nil, errors.New("Prometheus at http://p:9090 did not answer within 10s"), nil}
	n := 0
	cfg := RefreshConfig{
		Fetch: func(context.Context) (func(int) []string, error) {
			err := answers[n]
			n++
			if err != nil {
				return nil, err
			}
			call := n
			return func(w int) []string { return []string{"fetch " + string(rune('0'+call)), strings.Repeat("x", w)} }, nil
		},
		Interval: time.Second, Loading: "asking…", Footer: "q quit",
		ErrorLine: func(err error) string { return "error: " + err.Error() },
	}
	m := &refreshModel{cfg: cfg, ctx: context.Background(), f: frame{t: cat.T(cfg.Lang), st: newStyles(false), width: 80}}
	view := func() string { return m.View().Content }
	if !strings.Contains(view(), "asking…") {
		t.Errorf("before the first answer:\n%s", view())
	}
	for i := 0; i < 3; i++ {
		_, cmd := m.Update(m.fetch()())
		if cmd == nil {
			t.Fatalf("answer %d scheduled no next refresh", i)
		}
		switch i {
		case 0:
			if !strings.Contains(view(), "fetch 1") {
				t.Errorf("first answer:\n%s", view())
			}
		case 1:
			if v := view(); !strings.Contains(v, "error: Prometheus at http://p:9090") || !strings.Contains(v, "fetch 1") {
				t.Errorf("failed refresh hides the error or the last good view:\n%s", v)
			}
		case 2:
			if v := view(); strings.Contains(v, "error:") || !strings.Contains(v, "fetch 3") {
				t.Errorf("recovered refresh:\n%s", v)
			}
		}
	}
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 10})
	if !strings.Contains(view(), strings.Repeat("x", 40)) {
		t.Errorf("not redrawn at the new width:\n%s", view())
	}
	if _, cmd := m.Update(key("esc")); quits(cmd) {
		t.Error("esc quit the view")
	}
	if _, cmd := m.Update(key("q")); !quits(cmd) {
		t.Error("q did not quit")
	}
}
