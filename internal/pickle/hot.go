package pickle

// The opcodes hot runs are the body of a snapshot: a trace entry as
// CPython's pickler writes it (pickletools.dis; * marks what hot runs, the
// rest is step's):
//
//	}    EMPTY_DICT *
//	\x94 MEMOIZE *
//	(    MARK *
//	j    LONG_BINGET 1925 ('action') *   j LONG_BINGET 2373 ('alloc') *
//	j    LONG_BINGET 1927 ('addr') *     \x8a LONG1 139753871376384 *
//	h    BINGET 21 ('size') *            J BININT 6291456 *
//	...
//	h    BINGET 16 ('frames') *
//	]    EMPTY_LIST *  \x94 MEMOIZE *  ( MARK *
//	h    BINGET 52 (a frame dict, converted) *  ... 40 of them
//	e    APPENDS
//	u    SETITEMS

import (
	"encoding/binary"
	"slices"
)

// hot runs at most n of the commonest opcodes straight from the buffer,
// while at least 16 bytes are there, and returns how many it ran; it stops
// at anything unusual, errors included, for step to run and report. These
// opcodes are nine in ten of a snapshot and memo gets (a stack's frames,
// a dict's keys) six in ten, so the read position, the stack and the
// first memo page stay in locals here instead of going through the
// Decoder at every opcode.
func (d *Decoder) hot(n int) int {
	in := &d.in
	buf := in.buf[:in.end]
	pos, last := in.pos, len(buf)-16
	// Each opcode here pushes one value at most: with room for n more and
	// n cut to what MaxStack leaves, pushes need no growth and no check.
	sp := len(d.stack)
	n = min(n, MaxStack-sp)
	if n <= 0 {
		return 0 // step reports the depth
	}
	if cap(d.stack)-sp < n {
		d.stack = slices.Grow(d.stack, n)
	}
	stack := d.stack[:cap(d.stack)]
	memo0 := d.memoPage0()
	left := n
	for ; left > 0 && pos <= last; left-- {
		b := buf[pos : pos+16 : pos+16]
		if op := b[0]; op == opBinGet { // an index below 256: always on the first page
			i := int(b[1])
			if i >= len(memo0) || !pushable[memo0[i].Kind&15] {
				break
			}
			stack[sp] = memo0[i]
			sp++
			pos += 2
			continue
		} else if op == opLongBinGet {
			i := le32(b[1:5])
			var v Value
			if int(i) < len(memo0) {
				v = memo0[i]
			} else if int(i) < d.memoLen {
				v = d.memoAt(uint64(i))
			}
			if !pushable[v.Kind&15] {
				break
			}
			stack[sp] = v
			sp++
			pos += 5
			continue
		}
		v, push, ok := d.hotOther(buf[pos:], stack[:sp])
		if !ok {
			break
		}
		if push {
			stack[sp] = v
			sp++
		}
		pos += opLen(b)
		memo0 = d.memoPage0() // MEMOIZE may have grown it
	}
	d.stack = stack[:sp]
	in.pos = pos
	return n - left
}

// pushable is true for each Kind a memo get can push as it is: anything
// stored but a container, which getMemo resolves.
var pushable = [16]bool{KindNone: true, KindBool: true, KindInt: true, KindBigInt: true,
	KindFloat: true, KindString: true, KindExt: true, KindDropped: true}

// memoPage0 returns the first memo page (indices below memoPage), or nil.
func (d *Decoder) memoPage0() []Value {
	if len(d.memo) == 0 {
		return nil
	}
	return d.memo[0]
}

// opLen is the length of the opcode hotOther ran, its argument included.
func opLen(b []byte) int {
	switch b[0] {
	case opBinInt1:
		return 2
	case opBinInt2:
		return 3
	case opBinInt:
		return 5
	case opLong1, opShortBinUnicod:
		return 2 + int(b[1])
	}
	return 1
}

// hotOther runs hot's opcodes other than memo gets, from b (at least 16
// bytes of the buffer), and reports whether it did and what it pushes.
func (d *Decoder) hotOther(b []byte, stack []Value) (v Value, push, ok bool) {
	switch b[0] {
	case opMemoize:
		if d.memoCount != d.memoLen || len(stack) == 0 {
			return Value{}, false, false
		}
		top := stack[len(stack)-1]
		if isContainer(top.Kind) {
			c := d.cont(top)
			if c == nil || c.done || c.memo >= 0 {
				return Value{}, false, false
			}
			c.memo = int64(d.memoLen)
		}
		d.memoAppend(top)
		d.memoCount++
		return Value{}, false, true
	case opMark:
		if len(d.marks) >= MaxStack {
			return Value{}, false, false
		}
		d.marks = append(d.marks, mark{len(stack), d.contsPushed})
		return Value{}, false, true
	case opEmptyDict:
		v = d.newContainer(KindDict, nil, false)
	case opEmptyList:
		v = d.newContainer(KindList, nil, false)
	case opBinInt1:
		v = Value{Kind: KindInt, N: int64(b[1])}
	case opBinInt2:
		v = Value{Kind: KindInt, N: int64(binary.LittleEndian.Uint16(b[1:3]))}
	case opBinInt:
		v = Value{Kind: KindInt, N: int64(int32(le32(b[1:5])))}
	case opLong1:
		k := uint(b[1])
		if k > 8 {
			return Value{}, false, false
		}
		// k <= 8 bytes of two's complement always fit an int64:
		// sign-extend the low k of the next eight (k = 0 gives 0).
		sh := 64 - 8*k
		v = Value{Kind: KindInt, N: int64(binary.LittleEndian.Uint64(b[2:10])<<sh) >> sh}
	case opShortBinUnicod:
		k := int(b[1])
		if len(b) < 2+k {
			return Value{}, false, false
		}
		v = d.addString(string(b[2 : 2+k]))
	default:
		return Value{}, false, false
	}
	return v, true, true
}
