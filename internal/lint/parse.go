package lint

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

//go:embed helper.py
var helperSource string

// SyntaxError is a file Python could not parse (or read), with its position.
type SyntaxError struct {
	Msg  string `json:"msg"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// Parsed is one file as the helper returned it: a module tree or an error.
type Parsed struct {
	Path   string
	Module *Node
	Err    *SyntaxError
}

// ErrNoPython says the interpreter given to --python could not be started.
var ErrNoPython = errors.New("no Python interpreter")

// ParseFiles parses all paths with one run of python (the interpreter that
// runs the jobs, so the grammar is exactly theirs). -I -S keep user site
// packages and sitecustomize out: the helper needs only ast and json.
func ParseFiles(ctx context.Context, python string, paths []string) ([]Parsed, error) {
	return parseFiles(ctx, python, paths)
}

// parseFiles runs the helper with extra arguments (--spans: end positions
// on every node, for --fix).
func parseFiles(ctx context.Context, python string, paths []string, helperArgs ...string) ([]Parsed, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	in, err := json.Marshal(paths)
	if err != nil {
		return nil, fmt.Errorf("encode path list: %w", err)
	}
	cmd := exec.CommandContext(ctx, python, append([]string{"-I", "-S", "-c", helperSource}, helperArgs...)...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", python, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: cannot run %q (%v); install Python 3.8+ or pass --python", ErrNoPython, python, err)
	}
	res, readErr := readHelper(out, len(paths))
	waitErr := cmd.Wait()
	if waitErr != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "Unknown option") {
			return nil, fmt.Errorf("%s lint helper failed: this is not Python 3 (it rejects -I): torchmem lint needs Python 3.8 or newer", python)
		}
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg == "" {
			msg = "no error message (is it Python 3.8 or newer?)"
		}
		return nil, fmt.Errorf("%s lint helper failed: %v: %s", python, waitErr, msg)
	}
	if readErr != nil {
		return nil, fmt.Errorf("%s lint helper: %w (is it Python 3.8 or newer?)", python, readErr)
	}
	return res, nil
}

// readHelper decodes want lines of helper output.
func readHelper(r io.Reader, want int) ([]Parsed, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	res := make([]Parsed, 0, want)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			p, perr := decodeHelperLine(line)
			if perr != nil {
				return nil, perr
			}
			res = append(res, p)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read output: %w", err)
		}
	}
	if len(res) != want {
		return nil, fmt.Errorf("got %d results for %d files", len(res), want)
	}
	return res, nil
}

// decodeHelperLine reads {"path": P, "ast": NODE} or {"path": P, "error": {...}}.
func decodeHelperLine(line []byte) (Parsed, error) {
	v, err := newASTDecoder(bytes.TrimSpace(line)).decodeTop()
	if err != nil {
		return Parsed{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Parsed{}, fmt.Errorf("helper output line is %T, not an object", v)
	}
	p := Parsed{}
	p.Path, _ = m["path"].(string)
	if e, ok := m["error"].(map[string]any); ok {
		msg, _ := e["msg"].(string)
		p.Err = &SyntaxError{Msg: msg, Line: intOf(e["line"]), Col: intOf(e["col"])}
		return p, nil
	}
	mod, ok := m["ast"].(*Node)
	if !ok {
		return Parsed{}, fmt.Errorf("%s: neither ast nor error in helper output", p.Path)
	}
	p.Module = mod
	return p, nil
}
