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
	in       input
	hooks    Hooks
	appender Appender // hooks, when they are one
	stack    []Value
	marks    []mark
	// contsPushed counts the lists, tuples and dicts pushed on the stack
	// (made, or got from the memo): a MARK whose count has not moved has
	// none above it, so its items need no finishing.
	contsPushed uint64
	memo        [][]Value // pages of memoPage entries: growing never copies
	memoLen     int       // entries in memo
	memoFirst   int       // capacity of the first page: about what the file needs
	sparse      map[uint64]Value
	memoCount   int
	strs        []string
	opOff       int64
	op          byte
	frameEnd    int64        // where the last FRAME said its data ends
	pool        [8][][]Value // item slices of replaced containers, by size class
	conts       []container
	freeConts   []uint32
	liveItems   int     // items held by the containers in conts
	released    []Value // release's work list, kept for reuse
	ops         uint32  // opcodes run, for the periodic budget check
	peakLive    int
	strBytes    int64 // bytes of the strings in strs
	stored      func() int64
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
	return newDecoder(input{r: r, buf: make([]byte, initial), size: size, progress: opt.Progress}, opt)
}

// NewBytesDecoder returns a decoder reading data in place, without copying
// it (a memory-mapped file): data is only read, and nothing the decoder
// returns refers to it. opt.Size is ignored (it is len(data)); opt.Progress
// is called at the decoder's budget checks (every 4,096 opcodes) with the
// bytes decoded so far, all of which the decoder is done with.
func NewBytesDecoder(data []byte, opt Options) *Decoder {
	return newDecoder(input{buf: data, end: len(data), eof: true, size: int64(len(data)), progress: opt.Progress}, opt)
}

func newDecoder(in input, opt Options) *Decoder {
	// CPython memoizes about one object per 70 bytes of a snapshot.
	first := 64
	if in.size > 0 {
		first = int(min(max(in.size/64, 64), memoPage))
	}
	appender, _ := opt.Hooks.(Appender)
	return &Decoder{
		appender:  appender,
		memoFirst: first,
		in:        in,
		hooks:     opt.Hooks,
		stored:    opt.Stored,
	}
}

// Decode reads opcodes up to STOP and returns the result.
func (d *Decoder) Decode() (Value, error) {
	in := &d.in
	for {
		// hot runs the opcodes before the next budget check; the one
		// that would reach it, and anything hot leaves, go the slow way.
		if left := budgetEvery - 1 - int(d.ops%budgetEvery); left > 0 && in.end-in.pos >= 16 {
			d.ops += uint32(d.hot(left))
		}
		if d.ops++; d.ops%budgetEvery == 0 {
			if err := d.checkBudget(); err != nil {
				d.opOff = in.offset()
				return Value{}, d.fail(err)
			}
			if in.r == nil && in.progress != nil {
				in.progress(in.offset())
			}
		}
		if in.end-in.pos < 16 && !in.eof {
			if err := in.fill(16); err != nil && err != io.ErrUnexpectedEOF {
				return Value{}, d.fail(err)
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

// Offset returns how many bytes of the pickle stream the decoder has read:
// from Hooks, the end of the opcode that completed the container.
func (d *Decoder) Offset() int64 { return d.in.offset() }

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

// mark is a MARK: where on the stack, and contsPushed then.
type mark struct {
	pos   int
	conts uint64
}

// popMark returns the values pushed since the last MARK and removes them,
// and whether no list, tuple or dict was pushed since (a stack's frames:
// nothing to finish). The slice aliases the stack and is valid until the
// next push.
func (d *Decoder) popMark() (items []Value, flat bool, err error) {
	if len(d.marks) == 0 || d.marks[len(d.marks)-1].pos > len(d.stack) {
		return nil, false, errors.New("no MARK before this opcode")
	}
	m := d.marks[len(d.marks)-1]
	d.marks = d.marks[:len(d.marks)-1]
	items = d.stack[m.pos:]
	d.stack = d.stack[:m.pos]
	return items, m.conts == d.contsPushed, nil
}

func (d *Decoder) addString(s string) Value {
	d.strs = append(d.strs, s)
	d.strBytes += int64(len(s))
	return Value{Kind: KindString, N: int64(len(d.strs) - 1)}
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
