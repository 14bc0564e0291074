// Package lint finds memory anti-patterns in PyTorch training scripts. Files
// are parsed by the job's own Python (an embedded helper prints the ast as
// JSON, one interpreter run for all files); the rules run in Go over that
// tree, with functions, loops and autograd contexts understood.
package lint

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// Options says how to lint.
type Options struct {
	Python string // interpreter that parses; "python3" when empty
	// Host is the machine's limits for TM013; nil skips TM013 with a note
	// (linting away from the machine that runs the jobs).
	Host *Host
	// Disable lists rules (ids or names) turned off on the command line,
	// on top of pyproject.toml.
	Disable []string
	// TorchVersion ("2.1") overrides the PyTorch version fixes are written
	// for; empty reads pins near each file, then asks Python (version.go).
	TorchVersion string
	probedTorch  TorchVersion // what Python imports, filled by Lint
}

// Result is what Lint found.
type Result struct {
	Findings []Finding
	Notes    []string // one-line notices (skipped checks)
	Files    int      // Python files linted
}

// Batches bound how many parsed trees are held at once: a project's
// scripts fit in one batch (one Python process, facts shared across all
// files); a 7,600-file tree lints in batches instead of holding 5 GB of
// trees. Files of one directory stay together (paths are in walk order).
const (
	batchFiles = 400
	batchBytes = 4 << 20 // of source; trees take ~100x that in memory
)

// batchesOf cuts files into consecutive batches by count and source size.
func batchesOf(files []string) [][]string {
	var out [][]string
	start, size := 0, int64(0)
	for i, f := range files {
		if st, err := os.Stat(f); err == nil {
			size += st.Size()
		}
		if i+1-start >= batchFiles || size >= batchBytes || i == len(files)-1 {
			out = append(out, files[start:i+1])
			start, size = i+1, 0
		}
	}
	return out
}

// Lint expands paths (directories are walked for *.py, skipping virtual
// environments and VCS folders), parses the files with one Python process
// per batch (up to 400 files or 4 MB of source) and runs the rules. The next batch is parsed while
// the rules run over the current one.
func Lint(ctx context.Context, paths []string, opts Options) (*Result, error) {
	files, err := expandPaths(paths)
	if err != nil {
		return nil, err
	}
	python := opts.Python
	if python == "" {
		python = "python3"
	}
	if opts.TorchVersion != "" {
		if _, err := ParseTorchVersion(opts.TorchVersion, "--torch-version"); err != nil {
			return nil, fmt.Errorf("--torch-version: %w", err)
		}
	} else {
		opts.probedTorch = probeTorch(ctx, python)
	}
	type batch struct {
		parsed []Parsed
		err    error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan batch, 1)
	go func() {
		defer close(batches)
		for _, group := range batchesOf(files) {
			parsed, err := ParseFiles(ctx, python, group)
			select {
			case batches <- batch{parsed, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	total := &Result{Notes: hostNotes(opts)}
	for b := range batches {
		if b.err != nil {
			return nil, b.err
		}
		res, err := lintParsed(b.parsed, opts)
		if err != nil {
			return nil, err
		}
		total.Files += res.Files
		total.Findings = append(total.Findings, res.Findings...)
	}
	if len(files) == 0 {
		total.Notes = append(total.Notes, "no *.py files under "+strings.Join(paths, ", "))
	}
	total.Findings = sortFindings(total.Findings)
	return total, nil
}

// hostNotes says what TM013 could not read.
func hostNotes(opts Options) []string {
	if opts.Host == nil {
		return []string{"TM013 skipped: host limits not read (linting away from the machine that runs the jobs)"}
	}
	if opts.Host.Note != "" {
		return []string{"TM013 partly skipped: " + opts.Host.Note}
	}
	return nil
}

func lintParsed(parsed []Parsed, opts Options) (*Result, error) {
	res := &Result{Files: len(parsed)}
	host := Host{}
	if opts.Host != nil {
		host = *opts.Host
	}
	proj := newProject(host)
	proj.python = opts.Python
	flagTorch, _ := ParseTorchVersion(opts.TorchVersion, "--torch-version")
	versions := newVersionFinder(flagTorch, opts.probedTorch)
	var all []Finding
	for _, p := range parsed {
		if p.Err != nil {
			all = append(all, syntaxFinding(p))
			continue
		}
		src, err := os.ReadFile(p.Path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p.Path, err)
		}
		nf := newFile(p.Path, p.Module, src, proj)
		nf.torch = versions.forFile(p.Path)
		proj.files = append(proj.files, nf)
	}
	proj.analyze()
	for _, f := range proj.files {
		if !f.usesTorch() {
			continue // not PyTorch code: model(x), x.data mean something else here
		}
		for _, r := range allRules {
			if check := checks[r.ID]; check != nil {
				check(f)
			}
		}
		for _, fd := range f.findings {
			if versioned(&fd, f.torch) {
				all = append(all, fd)
			}
		}
	}
	kept, err := applyPolicy(all, proj, opts)
	if err != nil {
		return nil, err
	}
	res.Findings = sortFindings(kept)
	return res, nil
}

func syntaxFinding(p Parsed) Finding {
	line, col := p.Err.Line, p.Err.Col
	if line < 1 {
		line = 1
	}
	if col < 1 {
		col = 1
	}
	return Finding{File: p.Path, Line: line, Col: col, Rule: "TM000", Severity: SevError,
		Message: p.Err.Msg, Fix: ruleByID["TM000"].Fix}
}

// skipDirs are never walked: VCS data, caches and virtual environments
// (also recognised by their pyvenv.cfg).
var skipDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "__pycache__": true, ".tox": true, ".nox": true,
	"venv": true, ".venv": true, "node_modules": true, "site-packages": true, ".eggs": true,
	".mypy_cache": true, ".pytest_cache": true, ".ruff_cache": true, "conda-meta": true,
}

func expandPaths(paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("lint %s: %w", p, err)
		}
		found := []string{p}
		if st.IsDir() {
			if found, err = walkPython(p); err != nil {
				return nil, err
			}
		}
		for _, f := range found {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}
