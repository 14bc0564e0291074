package doctor

import (
	"fmt"
	"io"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/textwrap"
)

var marks = [...]string{"ok", "info", "WARN", "FAIL"}

// WriteText prints the report for people in lang: one line per finding,
// and for findings at warn or above (or all, verbose) the evidence, why
// and fix. Ids, marks, evidence and commands stay as they are: they are
// what users search for and copy.
func WriteText(w io.Writer, r Report, verbose bool, lang language.Tag) error {
	t := catalog.T(lang)
	ew := &errWriter{w: w}
	ew.printf("%s", t("report.header", orDefault(r.Host.Hostname, t("report.this_host"))))
	if r.Host.OS != "" || r.Host.Kernel != "" {
		ew.printf("%s", t("report.header_os", orDefault(r.Host.OS, t("report.unknown_os")), orDefault(r.Host.Kernel, "?")))
	}
	ew.printf("\n")
	cat := ""
	why, fix := t("report.why"), t("report.fix")
	// why: and fix: line up; the indent is the wider label's.
	label := max(i18n.Width(why), i18n.Width(fix))
	for _, f := range r.Findings {
		if f.Category != cat {
			cat = f.Category
			ew.printf("\n%s\n", t("category."+cat))
		}
		title, whyText, fixText := f.local(lang)
		ew.printf("  [%-4s] %s %s\n", marks[f.Severity], i18n.PadRight(f.ID, idWidth), title)
		if f.Severity < Warn && !verbose {
			continue
		}
		for _, e := range f.Evidence {
			src, val := e.local(lang)
			ew.printf("         %s%s%s\n", src, t("report.ev_sep"), val)
		}
		if whyText != "" {
			ew.printf("%s\n", textwrap.Wrap("         "+i18n.PadRight(why, label), whyText, textWidth))
		}
		if fixText != "" {
			ew.printf("%s\n", textwrap.Wrap("         "+i18n.PadRight(fix, label), fixText, textWidth))
		}
	}
	ew.printf("\n%s", t("report.counts", r.Counts["ok"], r.Counts["info"], r.Counts["warn"], r.Counts["fail"]))
	if r.tunable() {
		ew.printf("%s", t("report.tunable"))
	}
	ew.printf("\n")
	return ew.err
}

// idWidth is the column of finding ids: the longest,
// pytorch.cuda_module_loading, fits with a space to spare.
const idWidth = 28

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
