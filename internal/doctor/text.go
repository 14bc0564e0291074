package doctor

import (
	"fmt"
	"io"
	"strings"

	"github.com/torchmem/torchmem/internal/textwrap"
)

var marks = [...]string{"ok", "info", "WARN", "FAIL"}

// WriteText prints the report for people: one line per finding, and for
// findings at warn or above (or all, verbose) the evidence, why and fix.
func WriteText(w io.Writer, r Report, verbose bool) error {
	ew := &errWriter{w: w}
	ew.printf("torchmem doctor: %s", orDefault(r.Host.Hostname, "this host"))
	if r.Host.OS != "" || r.Host.Kernel != "" {
		ew.printf(" (%s, kernel %s)", orDefault(r.Host.OS, "unknown OS"), orDefault(r.Host.Kernel, "?"))
	}
	ew.printf("\n")
	cat := ""
	for _, f := range r.Findings {
		if f.Category != cat {
			cat = f.Category
			ew.printf("\n%s\n", strings.ToUpper(cat))
		}
		ew.printf("  [%-4s] %-28s %s\n", marks[f.Severity], f.ID, f.Title)
		if f.Severity < Warn && !verbose {
			continue
		}
		for _, e := range f.Evidence {
			ew.printf("         %s: %s\n", e.Source, e.Value)
		}
		if f.Why != "" {
			ew.printf("%s\n", textwrap.Wrap("         why: ", f.Why, textWidth))
		}
		if f.Fix != "" {
			ew.printf("%s\n", textwrap.Wrap("         fix: ", f.Fix, textWidth))
		}
	}
	ew.printf("\n%d ok, %d info, %d warn, %d fail", r.Counts["ok"], r.Counts["info"], r.Counts["warn"], r.Counts["fail"])
	if r.tunable() {
		ew.printf(" — `torchmem tune plan` shows the fixes it can apply")
	}
	ew.printf("\n")
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}

// tunable: some warning or failure has a setting tune applies (a GPU driver
// or a PyTorch variable is not one, and pointing at tune would mislead).
func (r Report) tunable() bool {
	for _, f := range r.Findings {
		if f.Severity >= Warn && f.Tune != "" {
			return true
		}
	}
	return false
}

// textWidth is where why and fix wrap: they are prose. Titles and evidence
// stay on one line (a value or a path is copied, not read).
const textWidth = textwrap.Width
