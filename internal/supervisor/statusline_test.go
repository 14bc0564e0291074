package supervisor

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/text/language"
)

// On a terminal the status lives on the bottom row below a scroll region,
// so the job's output never runs into it (it used to be redrawn on the
// current line: "…| 5sepoch 1/2 loss 0.1665"); done gives the screen back.
func TestStatusLineBottomRow(t *testing.T) {
	var b strings.Builder
	rows := 24
	l := statusLine{w: &b, on: true, size: func() (int, int, bool) { return rows, 40, true }}
	l.draw("torchmem: cgroup 211M/1.0G (813M free) | pss 220M | step 138")
	want := "\n\x1b7\x1b[1;23r\x1b8\x1b[1A" + "\x1b7\x1b[24;1H\x1b[2Ktorchmem: cgroup 211M/1.0G (813M free) \x1b8" // 39 = 40 columns - 1
	if b.String() != want {
		t.Fatalf("first draw %q, want %q", b.String(), want)
	}
	b.Reset()
	l.clear() // a notice: nothing to erase, the status is not on its line
	if b.Len() != 0 {
		t.Errorf("clear wrote %q", b.String())
	}
	rows, l.last = 30, time.Time{}
	l.draw("x")
	if want := "\x1b7\x1b[1;29r\x1b8\x1b7\x1b[30;1H\x1b[2Kx\x1b8"; b.String() != want {
		t.Errorf("after a resize %q, want %q", b.String(), want)
	}
	b.Reset()
	l.done()
	if want := "\x1b7\x1b[r\x1b[30;1H\x1b[2K\x1b8"; b.String() != want {
		t.Errorf("done %q, want %q", b.String(), want)
	}
}

// Without a known terminal size: the old in-place redraw, cut to fit.
func TestStatusLineFallback(t *testing.T) {
	var b strings.Builder
	l := statusLine{w: &b, on: true, size: func() (int, int, bool) { return 0, 0, false }}
	l.draw("torchmem: x")
	l.done()
	if want := "\r\x1b[Ktorchmem: x\r\x1b[K"; b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
	b.Reset()
	off := statusLine{w: &b}
	off.draw("x")
	off.done()
	if b.Len() != 0 {
		t.Errorf("off: wrote %q", b.String())
	}
}

// The live view gets the run's last events, oldest first, however many
// the run had.
func TestLiveKeepsLastEvents(t *testing.T) {
	s := &sup{cfg: Config{Rec: nopRecorder{}}, sm: &sampler{}}
	for i := 0; i < 3*liveEvents+3; i++ {
		s.event(time.Unix(int64(i), 0), "warn", "policy", 0, "x", nil)
	}
	ev := s.live().Events
	if len(ev) != liveEvents || ev[0].Time.Unix() != 2*liveEvents+3 || ev[liveEvents-1].Time.Unix() != 3*liveEvents+2 {
		t.Fatalf("live events %v", ev)
	}
}

// TestFitColumnsCJK: the status line is cut by display columns, never
// inside a Chinese character, so in zh it does not wrap either.
func TestFitColumnsCJK(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"torchmem：主机可用 1.2G", 14, "torchmem：主机"},
		{"torchmem：主机可用 1.2G", 13, "torchmem：主"}, // 机 would take columns 13-14
		{"torchmem：主机可用 1.2G", 11, "torchmem："},
		{"主机可用", 0, "主机可用"},
		{"abc", 2, "ab"},
	} {
		if got := fitColumns(c.in, c.n); got != c.want {
			t.Errorf("fitColumns(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestStatusTextZH: the live status line in Chinese, from the catalog.
func TestStatusTextZH(t *testing.T) {
	if m := catalog.Missing(); len(m) > 0 {
		t.Errorf("catalog incomplete:\n%s", strings.Join(m, "\n"))
	}
	zh := tr(language.Chinese)
	if got := zh("status.cgroup_limit", "211M", "1.0G", "813M"); got != "cgroup 211M/1.0G（剩余 813M）" {
		t.Errorf("status.cgroup_limit = %q", got)
	}
	if got := zh("status.step", 12345); got != "第 12345 步" {
		t.Errorf("a step number is grouped or lost: %q", got)
	}
}
