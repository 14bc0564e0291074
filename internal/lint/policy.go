package lint

import (
	"fmt"
	"regexp"
	"strings"
)

// applyPolicy drops findings disabled on the command line, in
// pyproject.toml or by a "# torchmem: ignore[...]" comment on their line,
// and applies configured severities.
func applyPolicy(all []Finding, proj *project, opts Options) ([]Finding, error) {
	cli := map[string]bool{}
	for _, s := range opts.Disable {
		id, ok := resolveRule(s)
		if !ok {
			return nil, fmt.Errorf("--disable: unknown rule %q", s)
		}
		cli[id] = true
	}
	lines := map[string][]string{}
	for _, f := range proj.files {
		lines[f.path] = f.lines
	}
	cf := &configFinder{byDir: map[string]*Config{}}
	var out []Finding
	for _, fd := range all {
		if cli[fd.Rule] {
			continue
		}
		cfg, err := cf.forFile(fd.File)
		if err != nil {
			return nil, err
		}
		ok, sev := cfg.allows(fd.Rule, fd.Severity)
		if !ok || suppressedIn(lines[fd.File], fd.Line, fd.endLine, fd.Rule) {
			continue
		}
		fd.Severity = sev
		out = append(out, fd)
	}
	return out, nil
}

// suppressedIn checks the finding's line and, for a statement spanning
// several lines, every line down to its last.
func suppressedIn(lines []string, line, end int, rule string) bool {
	if end < line {
		end = line
	}
	for l := line; l <= end && l-line < 200; l++ {
		if suppressed(lines, l, rule) {
			return true
		}
	}
	return false
}

var (
	ignoreRe = regexp.MustCompile(`#\s*torchmem:\s*ignore\b(?:\[([^\]]*)\])?`)
	// noqaRe is flake8's spelling: "# noqa" (every rule) or "# noqa: TM002,E501"
	// (the codes up to the first character that cannot be in a list of codes).
	noqaRe = regexp.MustCompile(`(?i)#\s*noqa\b(?:\s*:\s*([A-Za-z0-9_-]+(?:[\s,]+[A-Za-z0-9_-]+)*))?`)
)

// suppressed reports a "# torchmem: ignore" (all rules) or
// "# torchmem: ignore[TM002, TM010]" comment on the finding's line, or
// its flake8 aliases "# noqa" and "# noqa: TM002".
func suppressed(lines []string, line int, rule string) bool {
	if line < 1 || line > len(lines) {
		return false
	}
	text := lines[line-1]
	if strings.Contains(text, "torchmem") {
		for _, m := range ignoreRe.FindAllStringSubmatch(text, -1) {
			if m[1] == "" && !strings.Contains(m[0], "[") || listsRule(m[1], rule) {
				return true
			}
		}
	}
	if strings.Contains(strings.ToLower(text), "noqa") {
		for _, m := range noqaRe.FindAllStringSubmatch(text, -1) {
			if m[1] == "" || listsRule(m[1], rule) {
				return true
			}
		}
	}
	return false
}

// listsRule reports rule among the ids or names of a comma- or
// space-separated list ("TM002, TM010", "E501,TM002").
func listsRule(list, rule string) bool {
	for _, id := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if r, ok := resolveRule(id); ok && r == rule {
			return true
		}
	}
	return false
}
