package pickle

import "math/bits"

// recycle frees the slot and item slice of a container the hooks
// replaced: every later reference goes through the memo, which now holds
// the replacement, and reusing both keeps a large snapshot's garbage low.
func (d *Decoder) recycle(idx uint32, c *container) {
	items := c.items
	c.items = nil
	d.liveItems -= len(items)
	c.gen++ // stale references to the slot now fail instead of aliasing
	d.freeConts = append(d.freeConts, idx)
	k := bits.Len(uint(cap(items)))
	// Lists and dicts wait on the stack in batches of 1000 (APPENDS and
	// SETITEMS), so a pool of ~1000 per size class catches them all.
	if k < 2 || k >= len(d.pool) || len(d.pool[k]) >= 1100 {
		return
	}
	// Not cleared: Value holds no pointer and a reused slice is appended to.
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

func (d *Decoder) newContainer(k Kind, items []Value, nested bool) Value {
	var idx uint32
	if n := len(d.freeConts); n > 0 {
		idx = d.freeConts[n-1]
		d.freeConts = d.freeConts[:n-1]
	} else {
		d.conts = append(d.conts, container{})
		idx = uint32(len(d.conts) - 1)
	}
	d.contsPushed++ // every new container goes on the stack
	c := &d.conts[idx]
	gen := c.gen + 1
	*c = container{items: items, memo: -1, gen: gen, nested: nested}
	d.liveItems += len(items)
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
		// Its slot was reused: it was released after its parent was
		// converted, while this reference waited on the stack.
		return Value{Kind: KindDropped}, nil
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
		if c.nested {
			d.release(c.items)
		}
		if c.refs <= 0 {
			d.recycle(uint32(v.N), c)
		}
	}
	return nv, nil
}

// finishAll finishes the containers among items in place and reports
// whether any stays a generic container (the hooks did not convert it),
// which is what release has to look for once their parent is converted.
func (d *Decoder) finishAll(items []Value) (nested bool, err error) {
	for i, it := range items {
		if !isContainer(it.Kind) {
			continue
		}
		v, err := d.finish(it)
		if err != nil {
			return false, err
		}
		items[i] = v
		nested = nested || isContainer(v.Kind)
	}
	return nested, nil
}
