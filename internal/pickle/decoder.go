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
	"math"
	"math/bits"
)

// Error is a decoding failure at a byte offset of the pickle stream.
type Error struct {
	Offset int64
	Op     string // opcode name, empty when the failure is not about one
	Msg    string
}

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
}

// Decoder reads one pickle from a stream.
type Decoder struct {
	in        input
	hooks     Hooks
	stack     []Value
	marks     []int
	memo      []Value
	sparse    map[uint64]Value
	memoCount int
	strs      []string
	opOff     int64
	op        byte
	pool      [8][][]Value // item slices of replaced containers, by size class
	conts     []container
	freeConts []uint32
}

// recycle frees the slot and item slice of a container the hooks
// replaced: every later reference goes through the memo, which now holds
// the replacement, and reusing both keeps a large snapshot's garbage low.
func (d *Decoder) recycle(idx uint32, c *container) {
	items := c.items
	c.items = nil
	c.gen++ // stale references to the slot now fail instead of aliasing
	d.freeConts = append(d.freeConts, idx)
	k := bits.Len(uint(cap(items)))
	// Lists and dicts wait on the stack in batches of 1000 (APPENDS and
	// SETITEMS), so a pool of ~1000 per size class catches them all.
	if k < 2 || k >= len(d.pool) || len(d.pool[k]) >= 1100 {
		return
	}
	clear(items)
	d.pool[k] = append(d.pool[k], items[:0])
}

// itemSlice returns an empty slice with room for n items, reused if possible.
func (d *Decoder) itemSlice(n int) []Value {
	for k := bits.Len(uint(n)); k < len(d.pool); k++ {
		if p := d.pool[k]; len(p) > 0 {
			s := p[len(p)-1]
			if cap(s) >= n {
				d.pool[k] = p[:len(p)-1]
				return s
			}
		}
	}
	return make([]Value, 0, n)
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
	var memo []Value
	if size > 0 {
		// CPython memoizes about one object per 70 bytes of a snapshot.
		memo = make([]Value, 0, min(size/64, 1<<24))
	}
	return &Decoder{
		memo:  memo,
		in:    input{r: r, buf: make([]byte, initial), size: size, progress: opt.Progress},
		hooks: opt.Hooks,
	}
}

// Decode reads opcodes up to STOP and returns the result.
func (d *Decoder) Decode() (Value, error) {
	in := &d.in
	for {
		if in.end-in.pos < 16 && !in.eof {
			if err := in.fill(16); err != nil && err != io.ErrUnexpectedEOF {
				return Value{}, d.fail(err)
			}
		}
		if in.end-in.pos >= 16 && d.fast() {
			continue
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
// included, is left to step, which reports it properly.
func (d *Decoder) fast() bool {
	in := &d.in
	b := in.buf[in.pos:in.end]
	switch b[0] {
	case opBinGet, opLongBinGet:
		idx, n := uint64(b[1]), 2
		if b[0] == opLongBinGet {
			idx, n = uint64(le32(b[1:])), 5
		}
		if idx >= uint64(len(d.memo)) {
			return false
		}
		v := d.memo[idx]
		if v.Kind == kindUnset || isContainer(v.Kind) {
			return false
		}
		d.stack = append(d.stack, v)
		in.pos += n
	case opMemoize:
		if d.memoCount != len(d.memo) || len(d.stack) == 0 {
			return false
		}
		v := d.stack[len(d.stack)-1]
		if isContainer(v.Kind) {
			return false
		}
		d.memo = append(d.memo, v)
		d.memoCount++
		in.pos++
	case opMark:
		d.marks = append(d.marks, len(d.stack))
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

// cont returns the container v names, or nil if v is not a container or
// names a slot reused since (a stale reference, only in crafted files).
func (d *Decoder) cont(v Value) *container {
	if !isContainer(v.Kind) {
		return nil
	}
	idx, gen := uint32(v.N), uint32(v.N>>32)
	if int(idx) >= len(d.conts) || d.conts[idx].gen != gen {
		return nil
	}
	return &d.conts[idx]
}

func (d *Decoder) newContainer(k Kind, items []Value) Value {
	var idx uint32
	if n := len(d.freeConts); n > 0 {
		idx = d.freeConts[n-1]
		d.freeConts = d.freeConts[:n-1]
	} else {
		d.conts = append(d.conts, container{})
		idx = uint32(len(d.conts) - 1)
	}
	c := &d.conts[idx]
	gen := c.gen + 1
	*c = container{items: items, memo: -1, gen: gen}
	return Value{Kind: k, N: int64(gen)<<32 | int64(idx)}
}

// finish hands a completed container to the hooks once and returns what
// replaces it.
func (d *Decoder) finish(v Value) (Value, error) {
	if !isContainer(v.Kind) {
		return v, nil
	}
	c := d.cont(v)
	if c == nil {
		return Value{}, errors.New("reference to a container that no longer exists")
	}
	if c.done {
		repl := c.repl
		if c.refs--; c.refs <= 0 && c.replaced {
			d.recycle(uint32(v.N), c)
		}
		return repl, nil
	}
	c.done, c.repl = true, v
	if d.hooks == nil {
		return v, nil
	}
	nv, err := d.hooks.Finish(d, v)
	if err != nil {
		return Value{}, err
	}
	c = d.cont(v)
	c.repl = nv
	if c.memo >= 0 {
		d.setMemo(uint64(c.memo), nv)
	}
	if nv != v {
		c.replaced = true
		if c.refs <= 0 {
			d.recycle(uint32(v.N), c)
		}
	}
	return nv, nil
}

func (d *Decoder) finishAll(items []Value) error {
	for i, it := range items {
		if !isContainer(it.Kind) {
			continue
		}
		v, err := d.finish(it)
		if err != nil {
			return err
		}
		items[i] = v
	}
	return nil
}

func (d *Decoder) addString(s string) Value {
	d.strs = append(d.strs, s)
	return Value{Kind: KindString, N: int64(len(d.strs) - 1)}
}

func (d *Decoder) setMemo(idx uint64, v Value) {
	n := uint64(len(d.memo))
	switch {
	case idx < n:
		if d.memo[idx].Kind == kindUnset {
			d.memoCount++
		}
		d.memo[idx] = v
	case idx-n < 4096:
		for uint64(len(d.memo)) < idx {
			d.memo = append(d.memo, Value{})
		}
		d.memo = append(d.memo, v)
		d.memoCount++
	default:
		if d.sparse == nil {
			d.sparse = map[uint64]Value{}
		}
		if _, ok := d.sparse[idx]; !ok {
			d.memoCount++
		}
		d.sparse[idx] = v
	}
}

func (d *Decoder) getMemo(idx uint64) (Value, error) {
	var v Value
	if idx < uint64(len(d.memo)) {
		v = d.memo[idx]
	} else {
		v = d.sparse[idx]
	}
	if v.Kind == kindUnset {
		return Value{}, fmt.Errorf("memo index %d was never stored", idx)
	}
	if isContainer(v.Kind) {
		c := d.cont(v)
		if c == nil {
			return Value{}, fmt.Errorf("memo index %d refers to a container that no longer exists", idx)
		}
		if c.done {
			return c.repl, nil
		}
		c.refs++
	}
	return v, nil
}

// put stores the top of the stack in the memo at idx.
func (d *Decoder) put(idx uint64) error {
	if len(d.stack) == 0 {
		return errors.New("memo store with an empty stack")
	}
	v := d.stack[len(d.stack)-1]
	if c := d.cont(v); c != nil && !c.done && c.memo < 0 && idx <= math.MaxInt64 {
		c.memo = int64(idx)
	}
	d.setMemo(idx, v)
	return nil
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
