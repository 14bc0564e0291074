package tui

import (
	"strings"
	"testing"
)

// TestReliabilityCommandLineEscaped: a process's command line and name are
// the process's to choose; the view shows their control characters
// escaped, so only its own styles reach the terminal.
func TestReliabilityCommandLineEscaped(t *testing.T) {
	smp := fixtureSample(t, 2)
	const hostile = "\x1b]0;pwned\x07\x1b[2J\rFAKE"
	j := &smp.Jobs[0]
	j.Command = "python3 " + hostile
	for i := range j.Processes {
		j.Processes[i].Cmdline = []string{"python3", hostile}
		j.Processes[i].Name = "py" + hostile
	}
	for _, color := range []bool{false, true} {
		text := strings.Join(Render(smp, ViewOptions{Width: 200, Expand: true, Color: color}), "\n")
		raw := strings.ContainsAny(text, "\x07\r") || strings.Contains(text, "\x1b]") || strings.Contains(text, "\x1b[2J")
		shown := strings.Contains(text, `\x1b]0;pwned\x07\x1b[2J\rFAKE`)
		t.Logf("RELIABILITY|%s|%s|%s", "process command line in top's view (color "+map[bool]string{true: "on", false: "off"}[color]+")",
			"escaped, no raw OSC/BEL/CR", map[bool]string{true: "raw control characters", false: "escaped"}[raw || !shown])
		if raw || !shown {
			t.Errorf("color %v: raw %v, escaped form shown %v:\n%q", color, raw, shown, text)
		}
	}
}
