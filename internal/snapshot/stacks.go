package snapshot

import (
	"encoding/binary"
	"math/bits"

	"github.com/torchmem/torchmem/internal/pickle"
)

// finishList interns a non-empty list made only of frames as a stack.
func (b *builder) finishList(v pickle.Value) pickle.Value {
	if id, ok := b.internStack(b.dec.Items(v)); ok {
		return handle(tagStack, int(id))
	}
	return v
}

// internStack returns the stack id of items if they are frame handles (and
// there is at least one). CPython writes a fresh frames list per trace
// entry, so this runs once per entry: stacks are found by a hash of their
// frame ids, checked against the stack it names; one whose hash an earlier,
// different stack took goes by its bytes in stackIDs instead.
func (b *builder) internStack(items []pickle.Value) (StackID, bool) {
	if len(items) == 0 {
		return 0, false
	}
	// A real trace has a few hundred distinct stacks for millions of
	// entries (121 for the GPT-2 capture's): a small cache finds most with
	// one comparison and no hash of the whole stack. Its slot comes from
	// the length and five of the frames (hashing more, or all, cost more
	// than the misses it saved).
	n := len(items)
	key := uint64(n) + uint64(items[0].N)*3 + uint64(items[n/3].N)*5 + uint64(items[2*n/3].N)*7 + uint64(items[n-1].N)*11
	c := &b.stackCache[key*0x9e3779b97f4a7c15>>(64-stackCacheBits)]
	if c.ok && sameFrames(b.snap.Stacks[c.id], items) {
		return c.id, true
	}
	h, ok := frameHash(items)
	if !ok {
		return 0, false
	}
	id := b.internHashed(h, items)
	*c = stackCacheEntry{id: id, ok: true}
	return id, true
}

const stackCacheBits = 11

// stackCacheEntry is the last stack seen whose key chose this slot.
type stackCacheEntry struct {
	id StackID
	ok bool
}

// internHashed finds or adds the stack of items, whose frameHash is h.
func (b *builder) internHashed(h uint64, items []pickle.Value) StackID {
	id, taken := b.stackByHash[h]
	if taken && sameFrames(b.snap.Stacks[id], items) {
		return id
	}
	if !taken {
		id = b.addStack(items)
		b.stackByHash[h] = id
		return id
	}
	b.scratch = b.scratch[:0]
	for _, it := range items {
		_, idx := handleOf(it)
		b.scratch = binary.LittleEndian.AppendUint32(b.scratch, uint32(idx))
	}
	id, ok := b.stackIDs[string(b.scratch)]
	if !ok {
		id = b.addStack(items)
		b.stackIDs[string(b.scratch)] = id
	}
	return id
}

// frameHash hashes the frame ids of items; false unless every item is a
// frame handle and there is one at least. Each id is multiplied on its own
// and only a rotation and an xor chain from one to the next (FNV-1a's
// chained multiply took a third of the time of interning a 40-frame stack).
func frameHash(items []pickle.Value) (uint64, bool) {
	h := uint64(len(items))
	for _, it := range items {
		if it.Kind != pickle.KindExt || it.N>>tagShift != tagFrame {
			return 0, false
		}
		h = bits.RotateLeft64(h, 7) ^ uint64(uint32(it.N))*0x9e3779b97f4a7c15
	}
	return h, len(items) > 0
}

func (b *builder) addStack(items []pickle.Value) StackID {
	ids := make([]FrameID, len(items))
	for i, it := range items {
		_, idx := handleOf(it)
		ids[i] = FrameID(idx)
	}
	b.snap.Stacks = append(b.snap.Stacks, ids)
	return StackID(len(b.snap.Stacks) - 1)
}

// sameFrames reports whether items, frame handles, are the stack ids.
func sameFrames(ids []FrameID, items []pickle.Value) bool {
	if len(ids) != len(items) {
		return false
	}
	ids = ids[:len(items)]
	for i, it := range items {
		if it != handle(tagFrame, int(ids[i])) {
			return false
		}
	}
	return true
}
