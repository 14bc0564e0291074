package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

// tmuxBinary builds cmd/torchmem for the tmux tests, or skips.
func tmuxBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and drives it in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux (CI installs it: .ci/run)")
	}
	bin := filepath.Join(t.TempDir(), "torchmem")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/torchmem").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// tmux is one tmux server of the test's own (its socket in a temp dir).
type tmux struct {
	t    *testing.T
	sock string
}

func newTmux(t *testing.T) *tmux {
	x := &tmux{t, filepath.Join(t.TempDir(), "tmux.sock")}
	t.Cleanup(func() { exec.Command("tmux", "-S", x.sock, "kill-server").Run() })
	return x
}

func (x *tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", x.sock}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (x *tmux) capture() string {
	return strings.TrimSuffix(x.run("capture-pane", "-p", "-t", "v"), "\n")
}

// waitFor captures until the screen contains want, for up to d.
func (x *tmux) waitFor(want string, d time.Duration) (string, bool) {
	deadline := time.Now().Add(d)
	for {
		s := x.capture()
		if strings.Contains(s, want) || time.Now().After(deadline) {
			return s, strings.Contains(s, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitForRe is waitFor for a pattern.
func (x *tmux) waitForRe(re *regexp.Regexp, d time.Duration) (string, bool) {
	deadline := time.Now().Add(d)
	for {
		s := x.capture()
		if re.MatchString(s) || time.Now().After(deadline) {
			return s, re.MatchString(s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkScreen: every line within w columns, h lines, no replacement
// character (a CJK character cut in the middle of its bytes), the view's
// first line at the top (a line wider than the terminal would have
// wrapped and scrolled it away) and its footer on the last row.
func checkScreen(t *testing.T, what, screen string, w, h int, first, footer string) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	for len(lines) < h { // capture-pane drops trailing empty rows
		lines = append(lines, "")
	}
	if len(lines) != h {
		t.Errorf("%s: %d rows, want %d", what, len(lines), h)
	}
	for _, l := range lines {
		if n := i18n.Width(l); n > w {
			t.Errorf("%s: a line of %d columns on a %d-column terminal: %q", what, n, w, l)
		}
		if strings.ContainsRune(l, '\uFFFD') {
			t.Errorf("%s: a character cut in half: %q", what, l)
		}
	}
	if !strings.HasPrefix(lines[0], first) {
		t.Errorf("%s: first row %q, want %q…", what, lines[0], first)
	}
	if last := strings.TrimRight(lines[h-1], " "); last != footer {
		t.Errorf("%s: last row %q, want the footer %q\n%s", what, last, footer, screen)
	}
}

// TestTmuxTop drives the real binary's `top` in tmux at 80×24 and 200×50,
// in English and Chinese, over the captured DataLoader job with 6
// workers, with the keys people press: ? (help), esc, s, r, e, j j
// (select), x (the signal question), esc, q.
func TestTmuxTop(t *testing.T) {
	bin := tmuxBinary(t)
	tree, err := sampletest.WriteJobTree(t.TempDir(), 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		for _, lang := range []string{"en", "zh"} {
			tag, locale, job, fold := i18n.EN, "C.UTF-8", "JOB 2000", "6 workers folded"
			if lang == "zh" {
				tag, locale, job, fold = i18n.ZH, "zh_CN.UTF-8", "作业 2000", "已折叠 6 个 worker"
			}
			tr := cat.T(tag)
			footer := i18n.Cut(tr("footer.top"), sz[0])
			x := newTmux(t)
			x.run("-u", "new-session", "-d", "-s", "v", "-x", strconv.Itoa(sz[0]), "-y", strconv.Itoa(sz[1]),
				"env", "LANG="+locale, "LC_ALL="+locale, "TORCHMEM_PROC_ROOT="+tree.ProcRoot, "TORCHMEM_SYS_ROOT="+tree.SysRoot,
				"TORCHMEM_ROOT="+t.TempDir(), bin, "top")
			name := size2(sz) + " " + lang
			s, ok := x.waitFor(job, 15*time.Second)
			if !ok || !strings.Contains(s, fold) {
				t.Fatalf("%s: no job, or not folded:\n%s", name, s)
			}
			checkScreen(t, name, s, sz[0], sz[1], "torchmem top", footer)
			steps := []struct {
				keys []string
				want string
			}{
				{[]string{"?"}, tr("help.title")},
				{[]string{"Escape"}, fold},
				{[]string{"s"}, "RSS▼"},
				{[]string{"r"}, "RSS▲"},
				{[]string{"e"}, "▾2000"},
				{[]string{"j", "j"}, ">  200"},
				{[]string{"x"}, "SIGTERM"},
				{[]string{"Escape"}, tr("signal.cancel")},
			}
			for _, st := range steps {
				for _, k := range st.keys {
					x.run("send-keys", "-t", "v", k)
					time.Sleep(300 * time.Millisecond)
				}
				what := name + " after " + strings.Join(st.keys, " ")
				s, ok := x.waitFor(st.want, 5*time.Second)
				if !ok {
					t.Errorf("%s: no %q on screen:\n%s", what, st.want, s)
				}
				if st.keys[0] != "x" { // the question replaces the footer
					checkScreen(t, what, s, sz[0], sz[1], "torchmem top", footer)
				}
			}
			x.run("send-keys", "-t", "v", "q")
		}
	}
}

// runStateCPU is a process row's role, state and CPU%: "main   S   0.0".
var runStateCPU = regexp.MustCompile(`(main|主进程)\s+[RSDT]\s+\d+\.\d`)

// TestTmuxRunTUI drives `torchmem run --tui` over a job that prints lines
// of Chinese wider than the terminal: the view cuts them at a character,
// never inside one, at 80×24 and 200×50; ? shows the help, and in the
// job's process table j selects a process and x asks before a signal.
func TestTmuxRunTUI(t *testing.T) {
	bin := tmuxBinary(t)
	if os.Geteuid() != 0 {
		t.Skip("run needs root for the job's cgroup")
	}
	line := strings.Repeat("训练步骤损失", 20)
	job := "i=0; while [ $i -lt 600 ]; do echo \"$i " + line + "\"; i=$((i+1)); sleep 0.05; done"
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		for _, lang := range []string{"en", "zh"} {
			tag, locale := i18n.EN, "C.UTF-8"
			if lang == "zh" {
				tag, locale = i18n.ZH, "zh_CN.UTF-8"
			}
			footer := i18n.Cut(cat.T(tag)("footer.run"), sz[0])
			dir := t.TempDir()
			x := newTmux(t)
			x.run("-u", "new-session", "-d", "-s", "v", "-x", strconv.Itoa(sz[0]), "-y", strconv.Itoa(sz[1]), "-c", dir,
				"env", "LANG="+locale, "LC_ALL="+locale, bin, "run", "--tui", "--no-history", "--", "sh", "-c", job)
			name := "run --tui " + size2(sz) + " " + lang
			s, ok := x.waitFor("训练", 20*time.Second)
			if !ok {
				t.Fatalf("%s: no job output on screen:\n%s", name, s)
			}
			checkScreen(t, name, s, sz[0], sz[1], "torchmem run ", footer)
			if sz[0] >= WideWidth {
				// The job's process row has its state and CPU% (gathered
				// from /proc beside the supervisor's sample; both were
				// blank once).
				if s, ok := x.waitForRe(runStateCPU, 10*time.Second); !ok {
					t.Errorf("%s: no state and CPU%% in the main process's row:\n%s", name, s)
				}
			}
			x.run("send-keys", "-t", "v", "?")
			if s, ok := x.waitFor(cat.T(tag)("help.title"), 5*time.Second); !ok {
				t.Errorf("%s: ? shows no help:\n%s", name, s)
			} else {
				checkScreen(t, name+" help", s, sz[0], sz[1], "torchmem run ", footer)
			}
			x.run("send-keys", "-t", "v", "Escape")
			time.Sleep(300 * time.Millisecond)
			// The job's process table: j selects a process (sh or one of
			// its sleeps), x asks before signalling it, k makes it KILL,
			// esc sends nothing.
			tr := cat.T(tag)
			for _, st := range []struct{ key, want string }{
				{"j", "\n>"},
				{"x", "send SIGTERM to pid"},
				{"k", "send SIGKILL to pid"},
				{"Escape", tr("signal.cancel")},
			} {
				x.run("send-keys", "-t", "v", st.key)
				want := st.want
				if lang == "zh" && st.key == "x" {
					want = "发送 SIGTERM"
				} else if lang == "zh" && st.key == "k" {
					want = "发送 SIGKILL"
				}
				if s, ok := x.waitFor(want, 5*time.Second); !ok {
					t.Errorf("%s after %s: no %q on screen:\n%s", name, st.key, want, s)
				}
			}
			// Stop the job (a second Ctrl-C if the first did not).
			exec.Command("tmux", "-S", x.sock, "send-keys", "-t", "v", "C-c").Run()
			time.Sleep(time.Second)
			exec.Command("tmux", "-S", x.sock, "send-keys", "-t", "v", "C-c").Run()
		}
	}
}
