package lint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// Local modules: `from utils import AverageMeter`, `from .meters import
// record`, `import helpers` name files of the project itself. When such a
// file was not given on the command line it is parsed too (one more
// Python run, only when there is one), so summaries and Dataset/DataLoader
// facts see it; it is never reported on. Modules are looked up beside the
// importing file and at the project root (the nearest folder above it with
// pyproject.toml, setup.py, setup.cfg or .git); only one level of imports
// is followed.

// maxCtxFiles bounds the extra modules one batch reads.
const maxCtxFiles = 200

// loadLocalImports parses the local modules the linted files import.
func (p *project) loadLocalImports() {
	have := map[string]bool{}
	for _, f := range p.files {
		if abs, err := filepath.Abs(f.path); err == nil {
			have[abs] = true
		}
	}
	var want []string
	for _, f := range p.files {
		for _, path := range f.localImports() {
			abs, err := filepath.Abs(path)
			if err != nil || have[abs] || len(want) >= maxCtxFiles {
				continue
			}
			have[abs] = true
			want = append(want, path)
		}
	}
	if len(want) == 0 {
		return
	}
	python := p.python
	if python == "" {
		python = "python3"
	}
	parsed, err := ParseFiles(context.Background(), python, want)
	if err != nil {
		return // context only: the linted files are still checked without it
	}
	for _, pf := range parsed {
		if pf.Err != nil {
			continue
		}
		if src, err := os.ReadFile(pf.Path); err == nil {
			p.ctxFiles = append(p.ctxFiles, newFile(pf.Path, pf.Module, src, p))
		}
	}
}

// localImports lists the existing .py files f's imports name.
func (f *file) localImports() []string {
	dir := filepath.Dir(f.path)
	roots := []string{dir}
	if r := projectRoot(dir); r != "" && r != dir {
		roots = append(roots, r)
	}
	var out []string
	add := func(bases []string, parts []string) {
		for _, b := range bases {
			if p := moduleFile(b, parts); p != "" {
				out = append(out, p)
				return
			}
		}
	}
	for _, n := range f.nodes("Import") {
		for _, a := range n.L("names") {
			parts := strings.Split(a.S("name"), ".")
			if !torchEcosystem[parts[0]] {
				add(roots, parts)
			}
		}
	}
	for _, n := range f.nodes("ImportFrom") {
		lvl, _ := n.Get("level").(int)
		var parts []string
		if m := n.S("module"); m != "" {
			parts = strings.Split(m, ".")
		}
		if lvl == 0 && (len(parts) == 0 || torchEcosystem[parts[0]]) {
			continue
		}
		bases := roots
		if lvl > 0 {
			b := dir
			for i := 1; i < lvl; i++ {
				b = filepath.Dir(b)
			}
			bases = []string{b}
		}
		before := len(out)
		if len(parts) > 0 {
			add(bases, parts)
		}
		if len(out) == before { // from pkg import module
			for _, a := range n.L("names") {
				add(bases, append(append([]string(nil), parts...), a.S("name")))
			}
		}
	}
	return out
}

// moduleFile is base/a/b.py or base/a/b/__init__.py, "" when neither exists.
func moduleFile(base string, parts []string) string {
	for _, s := range parts {
		if s == "" || s == "*" {
			return ""
		}
	}
	p := filepath.Join(append([]string{base}, parts...)...)
	for _, c := range []string{p + ".py", filepath.Join(p, "__init__.py")} {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// projectRoot is the nearest folder at or above dir holding a project
// marker, "" when none is found within a few levels.
func projectRoot(dir string) string {
	d := dir
	for i := 0; i < 8; i++ {
		for _, m := range []string{"pyproject.toml", "setup.py", "setup.cfg", ".git"} {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	return ""
}
