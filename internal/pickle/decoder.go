// Package pickle decodes the data-only subset of Python's pickle format that
// PyTorch memory snapshots use (protocols 2-5: dicts, lists, tuples, ints,
// floats, strings, booleans, None and the memo). Every opcode that could
// import or call Python objects (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST,
// OBJ, NEWOBJ, ...) is refused with an error naming it and its offset, so
// decoding never runs anything, and declared lengths are checked against
// the input before memory is allocated.
package pickle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Error is a decoding failure at a byte offset of the pickle stream.
type Error struct {
	Offset int64
	Op     string // opcode name, empty when the failure is not about one
	Msg    string
}

// Error implements error.
func (e *Error) Error() string {
	if e.Op != "" {
		return fmt.Sprintf("pickle offset %d: %s: %s", e.Offset, e.Op, e.Msg)
	}
	return fmt.Sprintf("pickle offset %d: %s", e.Offset, e.Msg)
}

// Options tune a Decoder.
type Options struct {
	// Size is the total stream length when known (a plain file), used to
	// reject declared lengths beyond the end at once; -1 or 0 when unknown.
	Size int64
	// Hooks, if set, replace containers by typed objects as they complete.
	Hooks Hooks
	// Progress, if set, is called with the number of bytes read so far.
	Progress func(read int64)
	// Stored, if set, returns how many bytes of the input as stored have
	// been read (a gzip file's compressed bytes): the string budget grows
	// with it. Unset: the pickle stream's own offset.
	Stored func() int64
}

// Decoder reads one pickle from a stream.
type Decoder struct {
	in        input
	hooks     Hooks
	stack     []Value
	marks     []int
	memo      [][]Value // pages of memoPage entries: growing never copies
	memoLen   int       // entries in memo
	memoFirst int       // capacity of the first page: about what the file needs
	sparse    map[uint64]Value
	memoCount int
	strs      []string
	opOff     int64
	op        byte
	frameEnd  int64        // where the last FRAME said its data ends
	pool      [8][][]Value // item slices of replaced containers, by size class
	conts     []container
	freeConts []uint32
	liveItems int     // items held by the containers in conts
	released  []Value // release's work list, kept for reuse
	ops       uint32  // opcodes run, for the periodic budget check
	peakLive  int
	strBytes  int64 // bytes of the strings in strs
	stored    func() int64
}

// NewDecoder returns a decoder reading from r.
func NewDecoder(r io.Reader, opt Options) *Decoder {
	size := opt.Size
	if size <= 0 {
		size = -1
	}
	initial := bufSize
	if size > 0 && size < bufSize {
		initial = int(size) + 1 // small files: no 1 MiB buffer per decode
	} else if size < 0 {
		initial = 64 << 10
	}
	// CPython memoizes about one object per 70 bytes of a snapshot.
	first := 64
	if size > 0 {
		first = int(min(max(size/64, 64), memoPage))
	}
	return &Decoder{
		memoFirst: first,
		in:        input{r: r, buf: make([]byte, initial), size: size, progress: opt.Progress},
		hooks:     opt.Hooks,
		stored:    opt.Stored,
	}
}

// Decode reads opcodes up to STOP and returns the result.
func (d *Decoder) Decode() (Value, error) {
	in := &d.in
	for {
		if d.ops++; d.ops%budgetEvery == 0 {
			if err := d.checkBudget(); err != nil {
				d.opOff = in.offset()
				return Value{}, d.fail(err)
			}
		}
		if in.end-in.pos < 16 && !in.eof {
			if err := in.fill(16); err != nil && err != io.ErrUnexpectedEOF {
				return Value{}, d.fail(err)
			}
		}
		if in.end-in.pos >= 16 {
			// BINGET is four opcodes in ten of a snapshot: inline it here.
			if b := in.buf[in.pos:]; b[0] == opBinGet && int(b[1]) < d.memoLen {
				if v := d.memoAt(uint64(b[1])); v.Kind != kindUnset && !isContainer(v.Kind) {
					d.stack = append(d.stack, v)
					in.pos += 2
					continue
				}
			} else if b[0] == opLongBinGet {
				if idx := le32(b[1:]); int(idx) < d.memoLen {
					if v := d.memoAt(uint64(idx)); v.Kind != kindUnset && !isContainer(v.Kind) {
						d.stack = append(d.stack, v)
						in.pos += 5
						continue
					}
				}
			}
			if d.fast() {
				continue
			}
		}
		d.opOff = in.offset()
		op, err := in.readByte()
		if err != nil {
			return Value{}, d.fail(err)
		}
		d.op = op
		if op == opStop {
			return d.stop()
		}
		if err := d.step(op); err != nil {
			return Value{}, d.fail(err)
		}
	}
}

// fast runs the commonest opcodes straight from the buffer (at least 16
// bytes are there) and reports whether it did; anything unusual, errors
// included, is left to step, which reports it properly. BINGET and
// LONG_BINGET are Decode's own: what it leaves is for step.
func (d *Decoder) fast() bool {
	in := &d.in
	b := in.buf[in.pos:in.end]
	switch b[0] {
	case opMemoize:
		if d.memoCount != d.memoLen || len(d.stack) == 0 {
			return false
		}
		v := d.stack[len(d.stack)-1]
		if isContainer(v.Kind) {
			c := d.cont(v)
			if c == nil || c.done || c.memo >= 0 {
				return false
			}
			c.memo = int64(d.memoLen)
		}
		d.memoAppend(v)
		d.memoCount++
		in.pos++
	case opMark, opEmptyDict, opEmptyList:
		if len(d.stack) >= MaxStack || len(d.marks) >= MaxStack {
			return false // step reports it
		}
		switch b[0] {
		case opMark:
			d.marks = append(d.marks, len(d.stack))
		case opEmptyDict:
			d.stack = append(d.stack, d.newContainer(KindDict, nil))
		default:
			d.stack = append(d.stack, d.newContainer(KindList, nil))
		}
		in.pos++
	case opBinInt1:
		d.stack = append(d.stack, Value{Kind: KindInt, N: int64(b[1])})
		in.pos += 2
	case opBinInt2:
		d.stack = append(d.stack, Value{Kind: KindInt, N: int64(binary.LittleEndian.Uint16(b[1:]))})
		in.pos += 3
	case opBinInt:
		d.stack = append(d.stack, Value{Kind: KindInt, N: int64(int32(le32(b[1:])))})
		in.pos += 5
	case opLong1:
		n := int(b[1])
		if n > 8 {
			return false
		}
		d.stack = append(d.stack, decodeLong(b[2:2+n]))
		in.pos += 2 + n
	case opShortBinUnicod:
		n := int(b[1])
		if len(b) < 2+n {
			return false
		}
		d.stack = append(d.stack, d.addString(string(b[2:2+n])))
		in.pos += 2 + n
	default:
		return false
	}
	return true
}

// fail wraps err with the current opcode and offset.
func (d *Decoder) fail(err error) error {
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = errors.New("input ends in the middle of the pickle (truncated file?)")
	}
	name := ""
	if d.in.offset() > d.opOff {
		name = OpName(d.op)
	}
	return &Error{Offset: d.opOff, Op: name, Msg: err.Error()}
}

func (d *Decoder) stop() (Value, error) {
	if len(d.stack) != 1 || len(d.marks) != 0 {
		return Value{}, d.fail(fmt.Errorf("STOP with %d values and %d marks on the stack, want 1 and 0", len(d.stack), len(d.marks)))
	}
	v, err := d.finish(d.stack[0])
	if err != nil {
		return Value{}, d.fail(err)
	}
	if err := d.checkBudget(); err != nil {
		return Value{}, d.fail(err)
	}
	// CPython reads a whole frame before decoding it: a frame longer than
	// the data is a truncated file even when STOP comes early.
	for d.in.offset() < d.frameEnd {
		if _, err := d.in.take(int(min(d.frameEnd-d.in.offset(), bufSize))); err != nil {
			return Value{}, d.fail(err)
		}
	}
	return v, nil
}

func (d *Decoder) push(v Value) { d.stack = append(d.stack, v) }

func (d *Decoder) pop() (Value, error) {
	if len(d.stack) == 0 {
		return Value{}, errors.New("stack underflow")
	}
	v := d.stack[len(d.stack)-1]
	d.stack = d.stack[:len(d.stack)-1]
	return v, nil
}

// popMark returns the values pushed since the last MARK and removes them.
// The slice aliases the stack and is valid until the next push.
func (d *Decoder) popMark() ([]Value, error) {
	if len(d.marks) == 0 || d.marks[len(d.marks)-1] > len(d.stack) {
		return nil, errors.New("no MARK before this opcode")
	}
	m := d.marks[len(d.marks)-1]
	d.marks = d.marks[:len(d.marks)-1]
	items := d.stack[m:]
	d.stack = d.stack[:m]
	return items, nil
}

func (d *Decoder) addString(s string) Value {
	d.strs = append(d.strs, s)
	d.strBytes += int64(len(s))
	return Value{Kind: KindString, N: int64(len(d.strs) - 1)}
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
