package kmsg

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLine is the longest line kept whole; longer lines are cut
// there and the rest discarded, so one 10 MB line costs no more memory
// than a normal one.
const DefaultMaxLine = 16 << 10

// Scanner splits a stream into lines with bounded memory. Unlike
// bufio.Scanner it never fails on a long line: it truncates it. A trailing
// "\r" is dropped, and of a line holding carriage returns (progress bars)
// only the part after the last one is kept, as a terminal would show it.
type Scanner struct {
	r         *bufio.Reader
	max       int
	buf       []byte
	line      []byte
	n         int
	truncated bool
	err       error
}

// NewScanner returns a Scanner keeping at most maxLine bytes of a line
// (DefaultMaxLine when maxLine <= 0).
func NewScanner(r io.Reader, maxLine int) *Scanner {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &Scanner{r: bufio.NewReaderSize(r, 256<<10), max: maxLine}
}

// Scan advances to the next line; false at the end or on a read error.
func (s *Scanner) Scan() bool {
	s.buf, s.truncated = s.buf[:0], false
	seen := 0
	for {
		frag, err := s.r.ReadSlice('\n')
		if seen == 0 && len(frag) > 0 && len(frag) <= s.max && (err == nil || err == io.EOF) {
			// The whole line is in the reader's buffer: no copy.
			s.n++
			s.line = trimLine(frag)
			return true
		}
		seen += len(frag)
		if room := s.max - len(s.buf); room > 0 {
			s.buf = append(s.buf, frag[:min(room, len(frag))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && seen == 0 {
			if err != io.EOF {
				s.err = err
			}
			return false
		}
		s.truncated = seen > s.max
		s.n++
		s.line = trimLine(s.buf)
		return true
	}
}

func trimLine(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	// IndexByte is vectorised, LastIndexByte is not: look first.
	if bytes.IndexByte(b, '\r') >= 0 {
		b = b[bytes.LastIndexByte(b, '\r')+1:]
	}
	return b
}

// Bytes is the current line, valid until the next Scan.
func (s *Scanner) Bytes() []byte { return s.line }

// LineNo is the 1-based number of the current line.
func (s *Scanner) LineNo() int { return s.n }

// Truncated reports that the current line was longer than the limit.
func (s *Scanner) Truncated() bool { return s.truncated }

// Err is the first read error other than io.EOF.
func (s *Scanner) Err() error { return s.err }
