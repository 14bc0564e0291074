package pickle

import (
	"bufio"
	"encoding/binary"
	"io"
)

// Writer writes the subset of protocol 2 this package reads (dicts,
// lists, strings, ints, bools, None), enough for a memory snapshot made by
// torchmem (estimate --trace --snapshot). Strings are memoized so that a
// key repeated a million times costs a BINGET. The caller opens and closes
// containers in order; Close writes STOP and flushes.
type Writer struct {
	w    *bufio.Writer
	memo map[string]uint32
	err  error
}

// NewWriter starts a pickle on w.
func NewWriter(w io.Writer) *Writer {
	p := &Writer{w: bufio.NewWriterSize(w, 64<<10), memo: map[string]uint32{}}
	p.bytes(opProto, 2)
	return p
}

func (p *Writer) bytes(b ...byte) {
	if p.err == nil {
		_, p.err = p.w.Write(b)
	}
}

// Dict opens a dict: pairs of values follow, then EndDict.
func (p *Writer) Dict() { p.bytes(opEmptyDict, opMark) }

// EndDict closes the innermost dict.
func (p *Writer) EndDict() { p.bytes(opSetItems) }

// List opens a list: values follow, then EndList.
func (p *Writer) List() { p.bytes(opEmptyList, opMark) }

// EndList closes the innermost list.
func (p *Writer) EndList() { p.bytes(opAppends) }

// None writes None.
func (p *Writer) None() { p.bytes(opNone) }

// Bool writes True or False.
func (p *Writer) Bool(v bool) {
	if v {
		p.bytes(opNewTrue)
	} else {
		p.bytes(opNewFalse)
	}
}

// Int writes an int (BININT for 32 bits, LONG1 above).
func (p *Writer) Int(v int64) {
	if v >= -1<<31 && v < 1<<31 {
		var b [5]byte
		b[0] = opBinInt
		binary.LittleEndian.PutUint32(b[1:], uint32(int32(v)))
		p.bytes(b[:]...)
		return
	}
	var b [10]byte
	b[0], b[1] = opLong1, 8
	binary.LittleEndian.PutUint64(b[2:], uint64(v))
	p.bytes(b[:]...)
}

// Str writes a string, memoized.
func (p *Writer) Str(s string) {
	if i, ok := p.memo[s]; ok {
		var b [5]byte
		b[0] = opLongBinGet
		binary.LittleEndian.PutUint32(b[1:], i)
		p.bytes(b[:]...)
		return
	}
	var b [5]byte
	b[0] = opBinUnicode
	binary.LittleEndian.PutUint32(b[1:], uint32(len(s)))
	p.bytes(b[:]...)
	if p.err == nil {
		_, p.err = p.w.WriteString(s)
	}
	i := uint32(len(p.memo))
	p.memo[s] = i
	b[0] = opLongBinPut
	binary.LittleEndian.PutUint32(b[1:], i)
	p.bytes(b[:]...)
}

// Close ends the pickle and flushes; it returns the first write error.
func (p *Writer) Close() error {
	p.bytes(opStop)
	if p.err == nil {
		p.err = p.w.Flush()
	}
	return p.err
}
