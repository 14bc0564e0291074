package lint

// The helper prints one line per file, for example (for "x = f(1)"):
//
//	{"path":"a.py","ast":{"_":"Module","body":[{"_":"Assign","l":1,"c":0,
//	 "targets":[{"_":"Name","l":1,"c":0,"id":"x"}],"value":{"_":"Call","l":1,
//	 "c":4,"func":{"_":"Name","l":1,"c":4,"id":"f"},"args":[{"_":"Constant",
//	 "l":1,"c":6,"value":1}]}}]}}
//	{"path":"b.py","error":{"msg":"syntax error: invalid syntax","line":3,"col":7}}

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// astDecoder is a single-pass JSON reader for the helper's output. It builds
// Nodes directly (objects whose first key is "_"), which is several times
// faster than encoding/json into interface values and then converting: a
// 5,000-line file is ~1.7 MB of JSON. It accepts any valid JSON and rejects
// invalid JSON with an offset; it never panics (see FuzzDecodeAST).
type astDecoder struct {
	b      []byte
	i      int
	intern map[string]string
}

func newASTDecoder(b []byte) *astDecoder {
	return &astDecoder{b: b, intern: make(map[string]string, 256)}
}

func (d *astDecoder) errf(format string, a ...any) error {
	return fmt.Errorf("decode ast json at byte %d: %s", d.i, fmt.Sprintf(format, a...))
}

func (d *astDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// value reads any JSON value. Objects with a leading "_" key become *Node;
// other objects map[string]any; arrays []any.
func (d *astDecoder) value(parent *Node, field string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.errf("nesting deeper than %d", maxDepth)
	}
	d.ws()
	if d.i >= len(d.b) {
		return nil, d.errf("unexpected end")
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(parent, field, depth)
	case c == '[':
		return d.array(parent, field, depth)
	case c == '"':
		return d.str()
	case c == 't':
		return true, d.lit("true")
	case c == 'f':
		return false, d.lit("false")
	case c == 'n':
		return nil, d.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.num()
	default:
		return nil, d.errf("unexpected %q", c)
	}
}

func (d *astDecoder) lit(s string) error {
	if len(d.b)-d.i < len(s) || string(d.b[d.i:d.i+len(s)]) != s {
		return d.errf("bad literal")
	}
	d.i += len(s)
	return nil
}

func (d *astDecoder) num() (any, error) {
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			d.i++
			continue
		}
		break
	}
	if !validNumber(d.b[start:d.i]) {
		return nil, d.errf("bad number %q", d.b[start:d.i])
	}
	f, err := strconv.ParseFloat(string(d.b[start:d.i]), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, d.errf("bad number %q", d.b[start:d.i])
	}
	return f, nil
}

// str reads a string; short escape-free strings are interned (type names,
// field names, identifiers repeat thousands of times).
func (d *astDecoder) str() (string, error) {
	d.i++ // opening quote
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if c == '"' {
			raw := d.b[start:d.i]
			d.i++
			if len(raw) <= 32 {
				if s, ok := d.intern[string(raw)]; ok {
					return s, nil
				}
				s := string(raw)
				d.intern[s] = s
				return s, nil
			}
			return string(raw), nil
		}
		if c == '\\' || c < 0x20 {
			return d.strSlow(start)
		}
		d.i++
	}
	return "", d.errf("unterminated string")
}

func (d *astDecoder) strSlow(start int) (string, error) {
	out := append([]byte(nil), d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(out), nil
		case c < 0x20:
			return "", d.errf("control character in string")
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			return "", d.errf("unterminated escape")
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := d.u4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
					d.i += 2
					if r2, err = d.u4(); err != nil {
						return "", err
					}
				}
				r = utf16.DecodeRune(r, r2)
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", d.errf("bad escape \\%c", e)
		}
	}
	return "", d.errf("unterminated string")
}

func (d *astDecoder) u4() (rune, error) {
	if len(d.b)-d.i < 4 {
		return 0, d.errf("short \\u escape")
	}
	v, err := strconv.ParseUint(string(d.b[d.i:d.i+4]), 16, 32)
	if err != nil {
		return 0, d.errf("bad \\u escape")
	}
	d.i += 4
	return rune(v), nil
}

// validNumber checks the JSON number grammar, which is stricter than
// ParseFloat: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}
