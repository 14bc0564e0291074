package pickle

import (
	"errors"
	"fmt"
	"io"
)

const bufSize = 1 << 20

// input is a buffered reader that knows its absolute offset and, when the
// caller knows it, the total size, so declared lengths are checked against
// what remains before anything is allocated.
type input struct {
	r        io.Reader // nil when decoding a byte slice in place (buf, never written)
	buf      []byte
	pos, end int
	base     int64 // offset of buf[0] in the stream
	size     int64 // total size, or -1 when unknown (compressed input)
	eof      bool
	progress func(int64)
}

func (in *input) offset() int64 { return in.base + int64(in.pos) }

// fill makes at least n bytes (n <= bufSize) available from pos.
func (in *input) fill(n int) error {
	if in.end-in.pos >= n {
		return nil
	}
	if in.r == nil {
		return io.ErrUnexpectedEOF // decoding in place: all there is is there
	}
	if n > len(in.buf) {
		grown := make([]byte, min(max(n, 2*len(in.buf)), bufSize))
		in.end = copy(grown, in.buf[in.pos:in.end])
		in.base += int64(in.pos)
		in.pos = 0
		in.buf = grown
	}
	copy(in.buf, in.buf[in.pos:in.end])
	in.base += int64(in.pos)
	in.end -= in.pos
	in.pos = 0
	for in.end < n && !in.eof {
		m, err := in.r.Read(in.buf[in.end:])
		in.end += m
		if err == io.EOF {
			in.eof = true
		} else if err != nil {
			return fmt.Errorf("read at offset %d: %w", in.base+int64(in.end), err)
		}
	}
	if in.progress != nil {
		in.progress(in.base + int64(in.end))
	}
	if in.end < n {
		return io.ErrUnexpectedEOF
	}
	return nil
}

func (in *input) readByte() (byte, error) {
	if in.pos >= in.end {
		if err := in.fill(1); err != nil {
			return 0, err
		}
	}
	b := in.buf[in.pos]
	in.pos++
	return b, nil
}

// take returns the next n bytes (n <= bufSize), valid until the next call.
func (in *input) take(n int) ([]byte, error) {
	if err := in.fill(n); err != nil {
		return nil, err
	}
	b := in.buf[in.pos : in.pos+n]
	in.pos += n
	return b, nil
}

var errTooLong = errors.New("declared length exceeds the rest of the input")

// MaxStack bounds the values and marks on the decoder's stack. CPython's
// pickler batches APPENDS/SETITEMS by 1,000 and a memory snapshot nests a
// handful of containers deep, so real files stay in the low thousands; a
// hostile file of nested or unconsumed empty containers (one byte each, about
// a hundred bytes of decoder state each) is stopped here instead of growing
// memory a hundred times its size.
const MaxStack = 1 << 16

var errTooDeep = fmt.Errorf("more than %d values or marks on the stack: nesting deeper than any memory snapshot", MaxStack)

// readString reads n bytes as a string. A length longer than the known
// remainder fails at once; with an unknown size the string is read in
// chunks, so a hostile length costs no more memory than the data present.
func (in *input) readString(n uint64) (string, error) {
	if in.size >= 0 && n > uint64(in.size-in.offset()) {
		return "", errTooLong
	}
	if n <= bufSize {
		b, err := in.take(int(n))
		return string(b), err
	}
	var out []byte
	for rest := n; rest > 0; {
		c := min(rest, bufSize)
		b, err := in.take(int(c))
		if err != nil {
			return "", err
		}
		out = append(out, b...)
		rest -= c
	}
	return string(out), nil
}
