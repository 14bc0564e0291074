package pickle

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// step executes one opcode other than STOP.
func (d *Decoder) step(op byte) error {
	if len(d.stack) >= MaxStack || len(d.marks) >= MaxStack {
		return errTooDeep
	}
	switch op {
	case opProto:
		b, err := d.in.readByte()
		if err != nil {
			return err
		}
		if b > 5 {
			return fmt.Errorf("unsupported pickle protocol %d", b)
		}
	case opFrame:
		b, err := d.in.take(8)
		if err != nil {
			return err
		}
		n := binary.LittleEndian.Uint64(b)
		if d.in.size >= 0 && n > uint64(d.in.size-d.in.offset()) {
			return errTooLong
		}
		if n > 1<<62 {
			return errTooLong
		}
		d.frameEnd = d.in.offset() + int64(n)
	case opMark:
		d.marks = append(d.marks, mark{len(d.stack), d.contsPushed})
	case opNone:
		d.push(Value{Kind: KindNone})
	case opNewTrue, opNewFalse:
		d.push(Value{Kind: KindBool, N: boolN(op == opNewTrue)})
	case opBinInt, opBinInt1, opBinInt2, opLong1, opLong4, opBinFloat:
		return d.number(op)
	case opShortBinUnicod, opBinUnicode, opBinUnicode8:
		return d.unicode(op)
	case opEmptyDict:
		d.push(d.newContainer(KindDict, nil, false))
	case opEmptyList:
		d.push(d.newContainer(KindList, nil, false))
	case opEmptyTuple:
		d.push(d.newContainer(KindTuple, nil, false))
	case opTuple1, opTuple2, opTuple3:
		return d.smallTuple(int(op - opTuple1 + 1))
	case opTuple, opList, opDict:
		return d.fromMark(op)
	case opAppend, opAppends, opSetItem, opSetItems:
		return d.fill(op)
	case opBinPut, opLongBinPut, opMemoize, opBinGet, opLongBinGet:
		return d.memoOp(op)
	case opPop:
		_, err := d.pop()
		return err
	case opPopMark:
		_, _, err := d.popMark()
		return err
	default:
		return &Error{Offset: d.opOff, Op: OpName(op),
			Msg: fmt.Sprintf("opcode 0x%02x refused: %s", op, refusedWhy(op))}
	}
	return nil
}

func boolN(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (d *Decoder) number(op byte) error {
	var n int
	switch op {
	case opBinInt, opLong4:
		n = 4
	case opBinInt1, opLong1:
		n = 1
	case opBinInt2:
		n = 2
	case opBinFloat:
		n = 8
	}
	b, err := d.in.take(n)
	if err != nil {
		return err
	}
	switch op {
	case opBinInt:
		d.push(Value{Kind: KindInt, N: int64(int32(le32(b)))})
	case opBinInt1:
		d.push(Value{Kind: KindInt, N: int64(b[0])})
	case opBinInt2:
		d.push(Value{Kind: KindInt, N: int64(binary.LittleEndian.Uint16(b))})
	case opBinFloat:
		d.push(Value{Kind: KindFloat, N: int64(binary.BigEndian.Uint64(b))})
	case opLong1:
		return d.long(uint64(b[0]))
	case opLong4:
		return d.long(uint64(int32(le32(b)))) // negative lengths are huge: rejected below
	}
	return nil
}

// long decodes a little-endian two's-complement integer of n bytes.
func (d *Decoder) long(n uint64) error {
	if n > 1<<31 {
		return errors.New("negative byte count")
	}
	if d.in.size >= 0 && n > uint64(d.in.size-d.in.offset()) {
		return errTooLong
	}
	if n <= 64 { // every real integer: no allocation
		b, err := d.in.take(int(n))
		if err != nil {
			return err
		}
		d.push(decodeLong(b))
		return nil
	}
	if err := d.reserveString(n); err != nil {
		return err
	}
	s, err := d.in.readString(n)
	if err != nil {
		return err
	}
	d.push(decodeLong([]byte(s)))
	return nil
}

func decodeLong(b []byte) Value {
	if len(b) == 0 {
		return Value{Kind: KindInt}
	}
	neg := b[len(b)-1]&0x80 != 0
	var u uint64
	for i := 0; i < len(b) && i < 8; i++ {
		u |= uint64(b[i]) << (8 * i)
	}
	if len(b) < 8 && neg {
		u |= ^uint64(0) << (8 * len(b))
	}
	fits := true
	for i := 8; i < len(b); i++ {
		if (neg && b[i] != 0xff) || (!neg && b[i] != 0) {
			fits = false
		}
	}
	if fits && len(b) >= 8 && (u>>63 == 1) != neg {
		fits = false
	}
	if !fits {
		return Value{Kind: KindBigInt, N: int64(u)}
	}
	return Value{Kind: KindInt, N: int64(u)}
}

func (d *Decoder) unicode(op byte) error {
	var n uint64
	switch op {
	case opShortBinUnicod:
		b, err := d.in.readByte()
		if err != nil {
			return err
		}
		n = uint64(b)
	case opBinUnicode:
		b, err := d.in.take(4)
		if err != nil {
			return err
		}
		n = uint64(le32(b))
	default:
		b, err := d.in.take(8)
		if err != nil {
			return err
		}
		n = binary.LittleEndian.Uint64(b)
	}
	if d.in.size >= 0 && n > uint64(d.in.size-d.in.offset()) {
		return errTooLong // said first: the file is cut, not hostile
	}
	if err := d.reserveString(n); err != nil {
		return err
	}
	s, err := d.in.readString(n)
	if err != nil {
		return err
	}
	d.push(d.addString(s))
	return nil
}

func (d *Decoder) smallTuple(n int) error {
	if len(d.stack) < n {
		return errors.New("stack underflow")
	}
	items := append([]Value(nil), d.stack[len(d.stack)-n:]...)
	d.stack = d.stack[:len(d.stack)-n]
	nested, err := d.finishAll(items)
	if err != nil {
		return err
	}
	d.push(d.newContainer(KindTuple, items, nested))
	return nil
}

func (d *Decoder) fromMark(op byte) error {
	marked, flat, err := d.popMark()
	if err != nil {
		return err
	}
	items := append([]Value(nil), marked...)
	nested := false
	if !flat {
		if nested, err = d.finishAll(items); err != nil {
			return err
		}
	}
	switch op {
	case opTuple:
		d.push(d.newContainer(KindTuple, items, nested))
	case opList:
		d.push(d.newContainer(KindList, items, nested))
	default:
		if len(items)%2 != 0 {
			return errors.New("odd number of items for a dict")
		}
		d.push(d.newContainer(KindDict, items, nested))
	}
	return nil
}

// fill runs APPEND, APPENDS, SETITEM and SETITEMS.
func (d *Decoder) fill(op byte) error {
	var items []Value
	var flat bool
	var err error
	if op == opAppend || op == opSetItem {
		n := 1 + boolN(op == opSetItem)
		if int64(len(d.stack)) < n+1 {
			return errors.New("stack underflow")
		}
		items = d.stack[len(d.stack)-int(n):]
		d.stack = d.stack[:len(d.stack)-int(n)]
	} else if items, flat, err = d.popMark(); err != nil {
		return err
	}
	if len(d.stack) == 0 {
		return errors.New("no container to fill")
	}
	target := d.stack[len(d.stack)-1]
	want := KindList
	if op == opSetItem || op == opSetItems {
		want = KindDict
	}
	if target.Kind != want || d.cont(target) == nil {
		return fmt.Errorf("target is a %s, want a %s", target.Kind, want)
	}
	if want == KindDict && len(items)%2 != 0 {
		return errors.New("odd number of items for a dict")
	}
	nested := false
	if !flat {
		if nested, err = d.finishAll(items); err != nil {
			return err
		}
	}
	c := d.cont(target) // again: finishing may have grown d.conts
	if c == nil {
		return errors.New("target container no longer exists")
	}
	if want == KindList && d.appender != nil && (c.taken || c.items == nil && len(items) > 0) {
		if d.appender.Append(d, target, items, c.taken) {
			c.taken = true
			if nested {
				d.release(items) // the hooks keep what they need of them
			}
			return nil
		}
		if c.taken {
			return errors.New("the hooks refused items of a list whose items they took")
		}
	}
	c.nested = c.nested || nested
	if c.items == nil {
		c.items = d.itemSlice(len(items))
	} else if n := len(c.items) + len(items); n > cap(c.items) && n > 1<<16 {
		// A list of millions of trace entries: double, not append's 1.25x,
		// so it is copied about once instead of four times.
		grown := make([]Value, len(c.items), 2*n)
		copy(grown, c.items)
		c.items = grown
	}
	c.items = append(c.items, items...)
	d.liveItems += len(items)
	return nil
}

func (d *Decoder) memoOp(op byte) error {
	var idx uint64
	switch op {
	case opMemoize:
		return d.put(uint64(d.memoCount))
	case opBinPut, opBinGet:
		b, err := d.in.readByte()
		if err != nil {
			return err
		}
		idx = uint64(b)
	default:
		b, err := d.in.take(4)
		if err != nil {
			return err
		}
		idx = uint64(le32(b))
	}
	if op == opBinPut || op == opLongBinPut {
		return d.put(idx)
	}
	v, err := d.getMemo(idx)
	if err != nil {
		return err
	}
	if isContainer(v.Kind) {
		d.contsPushed++
	}
	d.push(v)
	return nil
}
