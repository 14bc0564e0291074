package cli

import (
	"strings"
	"testing"
)

// TestArgsErrors: a missing or extra argument names the argument, what it
// is and the usage line, in one line, not cobra's "accepts 1 arg(s)".
func TestArgsErrors(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"show"}, []string{"torchmem: show: missing RUN (a run id from `torchmem runs`", "usage: torchmem show RUN"}},
		{[]string{"snapshot", "diff", "a.pickle"}, []string{"snapshot diff: missing B (a memory snapshot pickle", "usage: torchmem snapshot diff A B"}},
		{[]string{"report", "a", "b"}, []string{`report: 2 arguments, want 1 (RUN): "b" is one too many`}},
	}
	for _, c := range cases {
		var stdout, stderr strings.Builder
		env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
		if code := Run(env, c.args); code == 0 {
			t.Errorf("%v: exit 0", c.args)
		}
		got := stderr.String()
		if strings.Count(strings.TrimSpace(got), "\n") != 0 {
			t.Errorf("%v: more than one line: %q", c.args, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: %q lacks %q", c.args, got, w)
			}
		}
	}
}
