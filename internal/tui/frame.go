package tui

import (
	"strings"

	"github.com/torchmem/torchmem/internal/i18n"
)

// frame is the screen both live views (top and run --tui) draw on, so
// that they look and answer alike: header lines that stay in place, a
// body that scrolls (keeping the selected line in sight), a status line
// for what the last action did, and a footer of keys or a question. The
// help overlay takes the body's place. Every line is cut to the width by
// display columns (i18n.Cut), never by bytes or runes.
type frame struct {
	t             func(string, ...any) string
	st            styles
	width, height int
	scroll        int
	help          bool
	status        string
	statusErr     bool
}

// helpItem is one line of a view's help: the keys and what they do
// (a message id).
type helpItem struct{ keys, what string }

// shared are the keys both views have, listed in both helps.
var sharedHelp = []helpItem{
	{"? h", "help.help"},
	{"esc", "help.esc"},
	{"PgUp PgDn", "help.page"},
}

// sharedKey handles the keys both views share; it reports whether it
// used k. While the help is up it takes every key: esc, ?, h and q close
// it (Ctrl-C is the views' own, before this).
func (f *frame) sharedKey(k string) bool {
	if f.help {
		switch k {
		case "esc", "?", "h", "q":
			f.help = false
		}
		return true
	}
	page := max(1, f.height-4)
	switch k {
	case "?", "h":
		f.help = true
	case "pgdown", "space":
		f.scroll += page
	case "pgup":
		f.scroll = max(0, f.scroll-page)
	case "home":
		f.scroll = 0
	case "end":
		f.scroll = 1 << 30 // clamped by draw
	default:
		return false
	}
	return true
}

// say puts a line in the status line; err shows it as a failure.
func (f *frame) say(text string, err bool) { f.status, f.statusErr = text, err }

// draw lays the screen out: head pinned, body scrolled so that its line
// cursor (-1: none) is in sight, then the status line and the footer at
// the bottom row. With the help up, items replace the body.
func (f *frame) draw(head, body []string, cursor int, footer string, items []helpItem) string {
	if f.help {
		body, cursor = f.helpLines(items), -1
	}
	bottom := []string{}
	if f.status != "" {
		st := f.st.notice
		if f.statusErr {
			st = f.st.warn
		}
		bottom = append(bottom, st.Render(i18n.Cut(f.status, f.width)))
	}
	bottom = append(bottom, f.st.dim.Render(i18n.Cut(footer, f.width)))
	if f.height <= 0 { // size not known yet: everything, unscrolled
		return f.join(append(append(head, body...), bottom...))
	}
	nh := min(len(head), max(0, f.height-len(bottom)-1))
	room := max(0, f.height-len(bottom)-nh)
	if cursor >= 0 {
		if cursor < f.scroll {
			f.scroll = cursor
		}
		if cursor >= f.scroll+room {
			f.scroll = cursor - room + 1
		}
	}
	f.scroll = min(max(0, f.scroll), max(0, len(body)-room))
	shown := body[min(f.scroll, len(body)):min(len(body), f.scroll+room)]
	lines := append(append([]string{}, head[:nh]...), shown...)
	for len(lines) < f.height-len(bottom) {
		lines = append(lines, "")
	}
	return f.join(append(lines, bottom...))
}

// join cuts every line to the width (lines may carry styles: the cut
// skips their escape sequences) and joins them.
func (f *frame) join(lines []string) string {
	if f.width > 0 {
		for i, l := range lines {
			lines[i] = i18n.Cut(l, f.width)
		}
	}
	return strings.Join(lines, "\n")
}

// helpLines is the help overlay: a title, then each item's keys in a
// column and what they do.
func (f *frame) helpLines(items []helpItem) []string {
	keyCol := 0
	for _, it := range items {
		keyCol = max(keyCol, i18n.Width(it.keys))
	}
	out := []string{f.st.title.Render(f.t("help.title")), ""}
	for _, it := range items {
		out = append(out, "  "+f.st.header.UnsetUnderline().Render(i18n.PadRight(it.keys, keyCol))+"  "+f.t(it.what))
	}
	return out
}
