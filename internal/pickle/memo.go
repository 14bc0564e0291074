package pickle

import (
	"errors"
	"fmt"
	"math"
)

// memoPage is the size of one memo page; a snapshot memoizes one object
// per 20-70 bytes, so a gigabyte file has tens of millions of entries, and
// a single slice would be copied at each growth with both copies alive.
const (
	memoPageBits = 16
	memoPage     = 1 << memoPageBits
)

// memoAt returns entry i, which must be below d.memoLen.
func (d *Decoder) memoAt(i uint64) Value { return d.memo[i>>memoPageBits][i&(memoPage-1)] }

func (d *Decoder) memoAppend(v Value) {
	n := len(d.memo)
	if n == 0 || len(d.memo[n-1]) == memoPage {
		c := memoPage
		if n == 0 {
			c = d.memoFirst // small files stay small
		}
		d.memo = append(d.memo, make([]Value, 0, c))
		n++
	}
	d.memo[n-1] = append(d.memo[n-1], v)
	d.memoLen++
}

func (d *Decoder) setMemo(idx uint64, v Value) {
	n := uint64(d.memoLen)
	switch {
	case idx < n:
		p := &d.memo[idx>>memoPageBits][idx&(memoPage-1)]
		if p.Kind == kindUnset {
			d.memoCount++
		}
		*p = v
	case idx-n < 4096:
		for uint64(d.memoLen) < idx {
			d.memoAppend(Value{})
		}
		d.memoAppend(v)
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
	if idx < uint64(d.memoLen) {
		v = d.memoAt(idx)
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
