package pickle

import (
	"errors"
	"fmt"
	"math"
)

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
