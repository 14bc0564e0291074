package pickle

import (
	"fmt"
	"math"
)

// Kind says what a Value holds.
type Kind uint8

// Value kinds. KindBigInt is an integer that does not fit in int64; its N
// keeps the low 64 bits (a uint64 address above 2^63 reads back with
// uint64(N)).
const (
	kindUnset Kind = iota
	KindNone
	KindBool
	KindInt
	KindBigInt
	KindFloat
	KindString
	KindList
	KindTuple
	KindDict
	// KindExt is a value a Hooks implementation put in place of a
	// container; N is its own handle.
	KindExt
	// KindDropped stands for a container the decoder released because the
	// hooks converted its parent and kept nothing of it (see Hooks): a later
	// reference to it reads as this, not as a failure.
	KindDropped
)

var kindNames = [...]string{"unset", "None", "bool", "int", "big int", "float", "str", "list", "tuple", "dict", "converted object", "value dropped after its parent was converted"}

// String names the kind as Python would.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Value is one decoded pickle object. Scalars live in N (ints, bools as
// 0/1, float bits, string index into the Decoder's table); for lists,
// tuples and dicts N names a container slot of the Decoder (read it with
// Items). Value holds no Go pointer, so the memo and the stack of a
// gigabyte snapshot cost the garbage collector nothing to scan.
type Value struct {
	Kind Kind
	N    int64
}

// container holds the items of a list or tuple, or the alternating keys
// and values of a dict, in the order the pickle stored them.
type container struct {
	items []Value
	memo  int64 // memo index this container was stored under, or -1
	repl  Value // what replaces it once done
	gen   uint32
	// refs counts references BINGET handed out while the container was
	// still being built (CPython shares frame dicts); the slot is reused
	// only after each of them has been finished too.
	refs     int32
	done     bool // handed to Hooks.Finish
	replaced bool // the hooks returned something else
	nested   bool // an item is a list, tuple or dict the hooks left generic
	taken    bool // an Appender keeps this list's items
}

// isContainer: KindList, KindTuple and KindDict are consecutive, so one
// unsigned comparison (this runs for every item the decoder stores).
func isContainer(k Kind) bool { return k-KindList <= KindDict-KindList }

// Float returns the float held by a KindFloat value.
func (v Value) Float() float64 { return math.Float64frombits(uint64(v.N)) }

// Items returns the items of a list or tuple, or the alternating keys and
// values of a dict; nil for anything else. The slice is the decoder's own.
func (d *Decoder) Items(v Value) []Value {
	if c := d.cont(v); c != nil {
		return c.items
	}
	return nil
}

// Hooks lets a caller replace containers by its own typed objects as soon
// as they are complete, so a large file never exists as a generic tree.
// Finish is called once per list, tuple or dict, when it becomes an item of
// another container or the result; the Value it returns takes the
// container's place everywhere, the memo included. When it returns a value
// other than v, the decoder releases v's items and every list, tuple or dict
// below them that the hooks left unconverted (keys a typed model ignores),
// so Finish must read all it needs from them before it returns; a later
// reference to a released container reads as KindDropped.
type Hooks interface {
	Finish(d *Decoder, v Value) (Value, error)
}

// Appender is a Hooks that may keep the items appended to a list itself
// instead of the decoder holding them until the list is finished (a
// snapshot's trace: millions of converted entries, in order). Append is
// offered every APPEND and APPENDS batch, its items finished, of a list the
// decoder holds no items of yet (taken false), and then of every list whose
// items it took before (taken true: it must take these too). A list whose
// items the hooks took reaches Finish empty, so Finish must convert it.
type Appender interface {
	Hooks
	Append(d *Decoder, list Value, items []Value, taken bool) bool
}

// Str returns the string held by v and whether v is a string.
func (d *Decoder) Str(v Value) (string, bool) {
	if v.Kind != KindString || v.N < 0 || v.N >= int64(len(d.strs)) {
		return "", false
	}
	return d.strs[v.N], true
}

// ToAny converts v to plain Go values (nil, bool, int64, float64, string,
// []any, map[string]any) for small generic parts such as allocator
// settings. Nesting deeper than maxDepth is an error, not a stack overflow.
func (d *Decoder) ToAny(v Value, maxDepth int) (any, error) {
	if maxDepth < 0 {
		return nil, fmt.Errorf("nesting deeper than the limit")
	}
	switch v.Kind {
	case KindNone, KindDropped:
		return nil, nil
	case KindBool:
		return v.N != 0, nil
	case KindInt:
		return v.N, nil
	case KindBigInt:
		return uint64(v.N), nil
	case KindFloat:
		return v.Float(), nil
	case KindString:
		s, _ := d.Str(v)
		return s, nil
	case KindList, KindTuple:
		items := d.Items(v)
		out := make([]any, 0, len(items))
		for _, it := range items {
			x, err := d.ToAny(it, maxDepth-1)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case KindDict:
		return d.dictToAny(v, maxDepth)
	}
	return nil, fmt.Errorf("cannot convert %s", v.Kind)
}

func (d *Decoder) dictToAny(v Value, maxDepth int) (any, error) {
	items := d.Items(v)
	out := make(map[string]any, len(items)/2)
	for i := 0; i+1 < len(items); i += 2 {
		k, err := d.ToAny(items[i], maxDepth-1)
		if err != nil {
			return nil, err
		}
		x, err := d.ToAny(items[i+1], maxDepth-1)
		if err != nil {
			return nil, err
		}
		out[fmt.Sprint(k)] = x
	}
	return out, nil
}
