package lint

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Mechanical fixes (torchmem lint --fix / --diff). The source text is
// edited at the node spans the helper prints with --spans (line, column,
// end line, end column, in UTF-8 bytes), never re-printed, so formatting
// and comments stay as they were. Fixed:
//
//	TM004               zero_grad(set_to_none=False) -> set_to_none=True
//	TM011               torch.load(f) -> torch.load(f, map_location="cpu")
//	inference-mode      with torch.no_grad(): -> with torch.inference_mode():
//	                    in evaluation blocks whose results cannot reach autograd
//	device-at-creation  torch.zeros(n).cuda() -> torch.zeros(n, device="cuda")
//
// TM004 and TM011 are fixed where the rule reports (after suppressions
// and configuration); the two rewrites are not findings and are made
// wherever they are safe, except on lines marked "# torchmem: ignore".

// FileFix is the fixed text of one file and what was changed.
type FileFix struct {
	Path    string
	Old     []byte
	New     []byte
	Applied []AppliedFix
}

// AppliedFix is one edit: where (1-based line of its start), which rule or
// rewrite, and a short description.
type AppliedFix struct {
	Line int    `json:"line"`
	Rule string `json:"rule"`
	What string `json:"what"`
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
	fix        AppliedFix
}

// Fix lints paths as Lint does and returns the fixed text of every file
// with at least one mechanical fix; nothing is written (see WriteFixes).
func Fix(ctx context.Context, paths []string, opts Options) ([]FileFix, error) {
	res, err := Lint(ctx, paths, opts)
	if err != nil {
		return nil, err
	}
	files, err := expandPaths(paths)
	if err != nil {
		return nil, err
	}
	byFile := map[string][]Finding{}
	for _, fd := range res.Findings {
		byFile[fd.File] = append(byFile[fd.File], fd)
	}
	python := opts.Python
	if python == "" {
		python = "python3"
	}
	var out []FileFix
	for _, group := range batchesOf(files) {
		parsed, err := parseFiles(ctx, python, group, "--spans")
		if err != nil {
			return nil, err
		}
		proj := newProject(Host{})
		for _, p := range parsed {
			if p.Err != nil {
				continue
			}
			src, err := os.ReadFile(p.Path)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", p.Path, err)
			}
			proj.files = append(proj.files, newFile(p.Path, p.Module, src, proj))
		}
		proj.analyze()
		for _, f := range proj.files {
			if !f.usesTorch() {
				continue
			}
			fx := newFixer(f)
			edits := fx.edits(byFile[f.path])
			if len(edits) == 0 {
				continue
			}
			fixed, applied := applyEdits(fx.src, edits)
			out = append(out, FileFix{Path: f.path, Old: fx.src, New: fixed, Applied: applied})
		}
	}
	return out, nil
}

// WriteFixes writes each fixed file in place, keeping its mode.
func WriteFixes(fixes []FileFix) error {
	for _, fx := range fixes {
		st, err := os.Stat(fx.Path)
		if err != nil {
			return fmt.Errorf("fix %s: %w", fx.Path, err)
		}
		if err := os.WriteFile(fx.Path, fx.New, st.Mode().Perm()); err != nil {
			return fmt.Errorf("fix %s: %w", fx.Path, err)
		}
	}
	return nil
}

// fixer edits one file: its text and where each line starts.
type fixer struct {
	f      *file
	src    []byte
	starts []int
}

func newFixer(f *file) *fixer {
	fx := &fixer{f: f, src: []byte(strings.Join(f.lines, "\n"))}
	off := 0
	for _, l := range f.lines {
		fx.starts = append(fx.starts, off)
		off += len(l) + 1
	}
	return fx
}

// edits collects the edits for the file: the findings' fixes and the
// rewrites.
func (fx *fixer) edits(findings []Finding) []edit {
	var out []edit
	for _, fd := range findings {
		switch fd.Rule {
		case "TM004":
			out = append(out, fx.zeroGrad(fd)...)
		case "TM011":
			out = append(out, fx.mapLocation(fd)...)
		}
	}
	for _, w := range fx.f.nodes("With") {
		if !fx.ignored(w.Line) {
			out = append(out, fx.inferenceMode(w)...)
		}
	}
	for _, c := range fx.f.nodes("Call") {
		if !fx.ignored(c.Line) {
			out = append(out, fx.deviceAtCreation(c)...)
		}
	}
	return out
}

// applyEdits applies non-overlapping edits (the first of overlapping ones
// in source order wins) and returns the new text.
func applyEdits(src []byte, edits []edit) ([]byte, []AppliedFix) {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var b bytes.Buffer
	var applied []AppliedFix
	pos := 0
	for _, e := range edits {
		if e.start < pos || e.end < e.start || e.end > len(src) {
			continue
		}
		b.Write(src[pos:e.start])
		b.WriteString(e.text)
		pos = e.end
		if n := len(applied); n == 0 || applied[n-1] != e.fix {
			applied = append(applied, e.fix)
		}
	}
	b.Write(src[pos:])
	return b.Bytes(), applied
}

// offset turns a 1-based line and 0-based byte column into an offset in
// the text (-1 when out of range).
func (fx *fixer) offset(line, col int) int {
	if line < 1 || line > len(fx.f.lines) || col < 0 || col > len(fx.f.lines[line-1]) {
		return -1
	}
	return fx.starts[line-1] + col
}

// span returns n's start and end offsets (ok false without --spans data).
func (fx *fixer) span(n *Node) (start, end int, ok bool) {
	el, ok1 := n.Get("el").(int)
	ec, ok2 := n.Get("ec").(int)
	if n == nil || !ok1 || !ok2 || n.Line == 0 {
		return 0, 0, false
	}
	start, end = fx.offset(n.Line, n.Col), fx.offset(el, ec)
	return start, end, start >= 0 && end >= start
}

// text is the source of n ("" without a span).
func (fx *fixer) text(n *Node) string {
	s, e, ok := fx.span(n)
	if !ok {
		return ""
	}
	return string(fx.src[s:e])
}

// findingCall is the call a finding points at (same line and column).
func (fx *fixer) findingCall(fd Finding) *Node {
	for _, c := range fx.f.nodes("Call") {
		if c.Line == fd.Line && fx.f.charCol(c.Line, c.Col+1) == fd.Col {
			return c
		}
	}
	return nil
}

// ignored: the line carries a bare "# torchmem: ignore" (or "# noqa").
func (fx *fixer) ignored(line int) bool {
	return suppressed(fx.f.lines, line, "TM999")
}
