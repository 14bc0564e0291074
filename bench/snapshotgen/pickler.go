package main

import (
	"bufio"
	"encoding/binary"
	"math"
	"sort"
)

// pickler writes protocol-4 pickles the way CPython's C pickler does:
// 64 KiB FRAMEs, every str and container memoized, batches of 1000 items.
type pickler struct {
	out   *bufio.Writer
	frame []byte
	memo  int
	strs  map[string]int
	err   error
}

func newPickler(w *bufio.Writer) *pickler {
	p := &pickler{out: w, strs: map[string]int{}}
	p.frame = append(p.frame, 0x80, 4)
	return p
}

func (p *pickler) op(b ...byte) { p.frame = append(p.frame, b...) }

// endOp closes a frame once it holds 64 KiB, at an opcode boundary.
func (p *pickler) endOp() {
	if len(p.frame) >= 64<<10 {
		p.flushFrame()
	}
}

func (p *pickler) flushFrame() {
	var hdr [9]byte
	hdr[0] = 0x95
	binary.LittleEndian.PutUint64(hdr[1:], uint64(len(p.frame)))
	if _, err := p.out.Write(hdr[:]); err != nil && p.err == nil {
		p.err = err
	}
	if _, err := p.out.Write(p.frame); err != nil && p.err == nil {
		p.err = err
	}
	p.frame = p.frame[:0]
}

func (p *pickler) memoize() { p.op(0x94); p.memo++ }

func (p *pickler) get(i int) {
	if i < 256 {
		p.op('h', byte(i))
	} else {
		p.op('j')
		p.frame = binary.LittleEndian.AppendUint32(p.frame, uint32(i))
	}
}

func (p *pickler) str(s string) {
	if i, ok := p.strs[s]; ok {
		p.get(i)
		return
	}
	if len(s) < 256 {
		p.op(0x8c, byte(len(s)))
	} else {
		p.op('X')
		p.frame = binary.LittleEndian.AppendUint32(p.frame, uint32(len(s)))
	}
	p.frame = append(p.frame, s...)
	p.strs[s] = p.memo
	p.memoize()
}

func (p *pickler) int(v int64) {
	switch {
	case v >= 0 && v < 256:
		p.op('K', byte(v))
	case v >= 0 && v < 65536:
		p.op('M', byte(v), byte(v>>8))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		p.op('J')
		p.frame = binary.LittleEndian.AppendUint32(p.frame, uint32(int32(v)))
	default:
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		n := 8
		for n > 1 && ((b[n-1] == 0 && b[n-2]&0x80 == 0) || (b[n-1] == 0xff && b[n-2]&0x80 != 0)) {
			n--
		}
		p.op(0x8a, byte(n))
		p.frame = append(p.frame, b[:n]...)
	}
}

func (p *pickler) bool(b bool) {
	if b {
		p.op(0x88)
	} else {
		p.op(0x89)
	}
}

// any writes generic values (allocator settings): nil, bool, int64,
// float64, string, []any, map[string]any with sorted keys.
func (p *pickler) any(v any) {
	switch x := v.(type) {
	case nil:
		p.op('N')
	case bool:
		p.bool(x)
	case int64:
		p.int(x)
	case float64:
		p.op('G')
		p.frame = binary.BigEndian.AppendUint64(p.frame, math.Float64bits(x))
	case string:
		p.str(x)
	case []any:
		p.list(len(x), func(i int) { p.any(x[i]) })
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		p.dict(len(keys), func(i int) { p.str(keys[i]); p.any(x[keys[i]]) })
	default:
		p.op('N')
	}
}

// list writes n items produced by item, in batches of 1000.
func (p *pickler) list(n int, item func(int)) {
	p.op(']')
	p.memoize()
	p.batches(n, item, 'a', 'e')
}

// dict writes n pairs produced by pair (key then value).
func (p *pickler) dict(n int, pair func(int)) {
	p.op('}')
	p.memoize()
	p.batches(n, pair, 's', 'u')
}

// record writes a dict of keys; val writes the value of keys[k].
func (p *pickler) record(keys []string, val func(k int)) {
	p.dict(len(keys), func(k int) { p.str(keys[k]); val(k) })
}

func (p *pickler) batches(n int, item func(int), one, many byte) {
	for lo := 0; lo < n; lo += 1000 {
		hi := min(lo+1000, n)
		if hi-lo == 1 {
			item(lo)
			p.op(one)
		} else {
			p.op('(')
			for i := lo; i < hi; i++ {
				item(i)
				p.endOp()
			}
			p.op(many)
		}
		p.endOp()
	}
}

func (p *pickler) finish() error {
	p.op('.')
	p.flushFrame()
	if p.err != nil {
		return p.err
	}
	return p.out.Flush()
}
