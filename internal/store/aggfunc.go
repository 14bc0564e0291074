package store

import (
	"database/sql/driver"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// gpuMaxFunc is the SQL aggregate torchmem_gpu_max(gpu): the element-wise
// maximum of the packed GPU columns of a group (see gpucol.go), packed the
// same way; NULL when no row of the group has one.
const gpuMaxFunc = "torchmem_gpu_max"

func init() {
	// The driver registers functions for every connection opened after this;
	// the store opens its connections later, in Open.
	if err := sqlite.RegisterFunction(gpuMaxFunc, &sqlite.FunctionImpl{
		NArgs: 1, Deterministic: true, VolatileArgs: true, // Step never keeps the BLOB
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &gpuMax{}, nil },
	}); err != nil {
		panic(fmt.Sprintf("register %s: %v", gpuMaxFunc, err)) // only a programming error (a duplicate name)
	}
}

// gpuMax accumulates the two per-device series; -1 is "no reading" (stored
// values are >= 0: encodeGPU keeps no negative value).
type gpuMax struct {
	seen bool
	vals [2][]int64
}

func (g *gpuMax) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	b, _ := args[0].([]byte)
	if len(b) == 0 {
		return nil // NULL: merging nothing, as mergeSample does
	}
	n, b, err := gpuHeader(b)
	if err != nil {
		return err
	}
	g.seen = true
	for i := range g.vals {
		for len(g.vals[i]) < int(n[i]) {
			g.vals[i] = append(g.vals[i], -1)
		}
		for j := 0; j < int(n[i]); j++ {
			v, k := binary.Uvarint(b)
			if k <= 0 {
				return errGPUBlob
			}
			b = b[k:]
			if v > 0 && int64(v-1) > g.vals[i][j] {
				g.vals[i][j] = int64(v - 1)
			}
		}
	}
	return nil
}

func (g *gpuMax) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("%s is not a window function", gpuMaxFunc)
}

func (g *gpuMax) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if !g.seen {
		return nil, nil
	}
	var lists [2][]*int64
	for i, vals := range g.vals {
		lists[i] = make([]*int64, len(vals))
		for j, v := range vals {
			if v >= 0 {
				lists[i][j] = &v
			}
		}
	}
	b := encodeGPU(lists[0], lists[1])
	if b == nil {
		b = []byte{gpuFormat, 0, 0} // rows with empty lists: still "present"
	}
	return b, nil
}

func (g *gpuMax) Final(*sqlite.FunctionContext) {}

// extraMaxFunc is the SQL aggregate torchmem_extra_max(extra): the
// per-key maximum of the Extra JSON objects of a group, as a JSON object;
// NULL when no row of the group has a key. Keys and values are read as
// encoding/json reads them into map[string]float64 (the same float parser),
// so the maxima are the floats the row-by-row merge found.
const extraMaxFunc = "torchmem_extra_max"

func init() {
	if err := sqlite.RegisterFunction(extraMaxFunc, &sqlite.FunctionImpl{
		NArgs: 1, Deterministic: true, VolatileArgs: true, // keys are cloned before they are kept
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &extraMax{}, nil },
	}); err != nil {
		panic(fmt.Sprintf("register %s: %v", extraMaxFunc, err))
	}
}

// extraMax keeps the maxima in a slice indexed by key: a map assignment
// to an existing string key stores the new key string too, which would
// keep a view of SQLite's buffer (VolatileArgs).
type extraMax struct {
	index map[string]int
	keys  []string
	max   []float64
}

func (e *extraMax) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	s, _ := args[0].(string)
	if s == "" {
		return nil // NULL (or the "" a failed marshal stored): no values, as json.Unmarshal gives none
	}
	if !extraFlat(s, e.merge) {
		var m map[string]float64
		_ = json.Unmarshal([]byte(s), &m) // anything unusual: exactly what scanSample does
		for k, v := range m {
			e.merge(k, v)
		}
	}
	return nil
}

func (e *extraMax) merge(k string, v float64) {
	if i, ok := e.index[k]; ok {
		if v > e.max[i] { // not max(): the first of -0 and 0 stays, as in mergeSample
			e.max[i] = v
		}
		return
	}
	if e.index == nil {
		e.index = map[string]int{}
	}
	k = strings.Clone(k) // k may be a view of SQLite's buffer
	e.index[k] = len(e.keys)
	e.keys, e.max = append(e.keys, k), append(e.max, v)
}

// extraFlat reads what json.Marshal writes for a map[string]float64
// ({"a":1,"b":2.5e-7}: no spaces, no escapes) and calls fn per pair. It
// first checks the whole text, so on false (any other shape) nothing was
// merged and the caller falls back to encoding/json.
func extraFlat(s string, fn func(string, float64)) bool {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' || strings.IndexByte(s, '\\') >= 0 {
		return false
	}
	for pass := 0; pass < 2; pass++ { // pass 0 validates, pass 1 merges
		body := s[1 : len(s)-1]
		for body != "" {
			if body[0] != '"' {
				return false
			}
			end := strings.IndexByte(body[1:], '"') + 1
			if end <= 0 || end+1 >= len(body) || body[end+1] != ':' {
				return false
			}
			key, rest := body[1:end], body[end+2:]
			if !extraPlainKey(key) {
				return false
			}
			n := strings.IndexByte(rest, ',')
			num, next := rest, ""
			if n >= 0 {
				num, next = rest[:n], rest[n+1:]
				if next == "" {
					return false // trailing comma
				}
			}
			if !jsonNumber(num) {
				return false
			}
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return false // out of range: encoding/json fails it too
			}
			if pass == 1 {
				fn(key, v)
			}
			body = next
		}
	}
	return true
}

// extraPlainKey: a key JSON reads as its bytes (valid UTF-8, no control
// character; escapes were ruled out before).
func extraPlainKey(k string) bool {
	for _, c := range k {
		if c < 0x20 || c == utf8.RuneError {
			return false // RuneError: invalid UTF-8, or a literal U+FFFD, which is rare enough to leave to encoding/json
		}
	}
	return true
}

// jsonNumber reports whether s is a JSON number
// (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?).
func jsonNumber(s string) bool {
	i := 0
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func (e *extraMax) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("%s is not a window function", extraMaxFunc)
}

func (e *extraMax) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if len(e.keys) == 0 {
		return nil, nil
	}
	m := make(map[string]float64, len(e.keys))
	for i, k := range e.keys {
		m[k] = e.max[i]
	}
	b, err := json.Marshal(m) // finite floats only: JSON has no others
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func (e *extraMax) Final(*sqlite.FunctionContext) {}
