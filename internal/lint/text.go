package lint

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/language"
)

// WriteText prints findings for people in lang: "file:line:col: TM002
// message [severity]" and an indented fix. Rule ids, severities, paths
// and code stay as they are; --json and SARIF are always English.
func WriteText(w io.Writer, fs []Finding, lang language.Tag) error {
	for _, f := range fs {
		msg, fix := f.Text(lang)
		if _, err := fmt.Fprintf(w, "%s:%d:%d: %s %s [%s]\n", f.File, f.Line, f.Col, f.Rule, msg, f.Severity); err != nil {
			return err
		}
		if fix != "" {
			if _, err := fmt.Fprintf(w, "    %s%s\n", label(lang, "text.fix"), strings.TrimSpace(fix)); err != nil {
				return err
			}
		}
	}
	return nil
}
