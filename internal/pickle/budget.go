package pickle

import "fmt"

// The live-value budget. Every value the decoder holds (a memo entry, a
// string, a container slot, an item of a container) costs 16 to about 60
// bytes of memory and at least one byte of input, so a hostile file of tiny
// containers kept alive could cost a hundred times its size. A memory
// snapshot holds far fewer: the memo (about one entry per 70 bytes), its
// distinct strings, and one converted handle per trace entry, block and
// segment (about one per 200 bytes); generic containers under keys the
// typed model ignores are released as soon as their parent is converted
// (see release): 1 value per 35-70 bytes on large real snapshots; on the
// small ones, the batches CPython's pickler leaves pending (1,000 entries)
// peak at 98k values, well under budgetFloor. So the decoder refuses to hold more than
// budgetFloor values plus one per budgetBytes bytes read so far: about ten
// times the input's size in memory at worst (a file of nothing but tiny
// containers kept alive), instead of a hundred. Legitimate data that dense
// (megabytes of small ints under a key nothing converts) is refused too,
// with an error that says why.
const (
	budgetFloor = 1 << 18
	budgetBytes = 4
	// budgetEvery is how many opcodes run between two checks; it bounds
	// the overshoot to a few megabytes.
	budgetEvery = 1 << 12
)

// The string budget. Strings are the one value whose memory is not bounded
// by the values budget: a gzip file of a few megabytes can declare and hold
// a string of gigabytes of zeros. Real snapshots hold at most about 4 bytes
// of strings per stored byte (frame names and file names, memoized once;
// the longest string seen is 2 KB), so the decoder refuses to hold more than
// stringFloor bytes of strings plus stringsPerByte per byte of the input as
// stored (the compressed file for gzip), checked before a string is read.
const (
	stringFloor    = 64 << 20
	stringsPerByte = 64
)

// StringBudget is how many bytes of strings the decoder may hold after
// reading stored bytes of the input as stored.
func StringBudget(stored int64) int64 { return stringFloor + stringsPerByte*stored }

func (d *Decoder) storedRead() int64 {
	if d.stored != nil {
		return d.stored()
	}
	return d.in.offset()
}

// reserveString fails when n more bytes of strings would pass the budget.
func (d *Decoder) reserveString(n uint64) error {
	stored := d.storedRead()
	if limit := StringBudget(stored); n > uint64(limit) || d.strBytes+int64(n) > limit {
		return fmt.Errorf("a string of %d bytes would make %d bytes of strings after %d bytes of input (limit %d): "+
			"far larger strings than any memory snapshot has", n, d.strBytes+int64(min(n, 1<<62)), stored, limit)
	}
	return nil
}

// Stats are the decoder's counts of values it holds, for tests and
// benchmarks.
type Stats struct {
	Live     int // values held now: memo entries, strings, containers, their items
	PeakLive int // the most Live seen at a budget check (every budgetEvery opcodes and at STOP)
	Memo     int
	Strings  int
	Conts    int // container slots in use
	Items    int // items held by those containers
}

// Stats returns the decoder's current counts.
func (d *Decoder) Stats() Stats {
	s := Stats{
		Memo: d.memoCount, Strings: len(d.strs),
		Conts: len(d.conts) - len(d.freeConts), Items: d.liveItems,
		PeakLive: d.peakLive,
	}
	s.Live = s.Memo + s.Strings + s.Conts + s.Items
	return s
}

// Budget is how many values the decoder may hold after reading n bytes.
func Budget(n int64) int64 { return budgetFloor + n/budgetBytes }

func (d *Decoder) checkBudget() error {
	if err := d.reserveString(0); err != nil {
		return err
	}
	live := d.Stats().Live
	d.peakLive = max(d.peakLive, live)
	read := d.in.offset()
	if limit := Budget(read); int64(live) > limit {
		return fmt.Errorf("holding %d decoded values after %d bytes (limit %d): "+
			"far more containers or memo entries kept alive than any memory snapshot has", live, read, limit)
	}
	return nil
}

// release drops the generic containers among items, a converted
// container's children, and theirs in turn: the hooks have read what they
// need (a trace entry's unknown nested dict, a segment's list of block
// handles), so only the memo could still reach them, and it gets a
// KindDropped instead. A container some pending reference still counts on
// (refs) keeps its slot until that reference is finished, but not its
// items. Iterative: nesting under an ignored key can be arbitrarily deep.
func (d *Decoder) release(items []Value) {
	work := append(d.released[:0], items...)
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		c := d.cont(v)
		if c == nil || !c.done || c.replaced {
			continue
		}
		if c.nested {
			work = append(work, c.items...)
		}
		c.replaced, c.repl = true, Value{Kind: KindDropped}
		if c.memo >= 0 {
			d.setMemo(uint64(c.memo), c.repl)
		}
		if c.refs <= 0 {
			d.recycle(uint32(v.N), c)
		} else {
			d.liveItems -= len(c.items)
			c.items = nil
		}
	}
	d.released = work[:0]
	if cap(work) > 1<<16 {
		d.released = nil // a one-off deep release: don't keep its buffer
	}
}
