package snapshot

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"github.com/torchmem/torchmem/internal/pickle"
)

// Handles put in place of finished containers: tag in the top byte.
const (
	tagFrame   = 1
	tagStack   = 2
	tagTrace   = 3
	tagBlock   = 4
	tagSegment = 5
	tagHistory = 6
	tagTraces  = 7 // a list of trace entries the builder took (tracelists.go)
	tagShift   = 56
)

func handle(tag int, idx int) pickle.Value {
	return pickle.Value{Kind: pickle.KindExt, N: int64(tag)<<tagShift | int64(idx)}
}

func handleOf(v pickle.Value) (tag int, idx int) {
	if v.Kind != pickle.KindExt {
		return 0, 0
	}
	return int(v.N >> tagShift), int(v.N & (1<<tagShift - 1))
}

// history is a torch <= 2.0 block history entry.
type history struct {
	realSize int64
	stack    StackID
}

// builder turns containers into typed records as the decoder finishes
// them, interning frames, stacks and texts.
type builder struct {
	snap        *Snapshot
	dec         *pickle.Decoder
	keys        []key    // key code by decoder string index, 0 = not looked up
	textByStr   []uint32 // text id + 1 by decoder string index, 0 = not looked up
	actionByStr []Action // action + 1 by decoder string index, 0 = not looked up
	frameIDs    map[Frame]FrameID
	stackByHash map[uint64]StackID // by finishList's hash of the frame ids
	stackIDs    map[string]StackID // stacks whose hash another one took
	stackCache  [1 << stackCacheBits]stackCacheEntry
	textIDs     map[string]uint32
	traces      []TraceEntry  // every trace entry, in the order read (tracelists.go)
	traceStart  int64         // input offset at the first trace entry
	size        int64         // input size, or -1
	tracesTaken []traceList   // lists of trace entries taken from the decoder (tracelists.go)
	takenLists  map[int64]int // index in tracesTaken by the list's pickle.Value.N while it is built
	blocks      []blockRec
	segments    []Segment
	hist        []history
	sawTime     bool
	sawHist     bool
	sawFrame    bool // frames directly on blocks (2.1+)
	scratch     []byte
	err         error
}

// blockRec is a block plus what torch <= 2.0 kept in its history.
type blockRec struct {
	Block
	hasRequested, hasAddress, hasFrames bool
	hist                                []int
}

func newBuilder() *builder {
	s := &Snapshot{Stacks: [][]FrameID{nil}, Texts: []string{""}, Streams: []int64{0}}
	return &builder{
		snap: s, frameIDs: map[Frame]FrameID{}, stackIDs: map[string]StackID{},
		stackByHash: map[uint64]StackID{}, takenLists: map[int64]int{},
		textIDs: map[string]uint32{"": 0},
	}
}

// Finish implements pickle.Hooks.
func (b *builder) Finish(d *pickle.Decoder, v pickle.Value) (pickle.Value, error) {
	switch v.Kind {
	case pickle.KindDict:
		return b.finishDict(d, v)
	case pickle.KindList:
		if i, ok := b.takenLists[v.N]; ok {
			delete(b.takenLists, v.N)
			return handle(tagTraces, i), nil
		}
		return b.finishList(v), nil
	}
	return v, nil
}

func (b *builder) finishDict(d *pickle.Decoder, v pickle.Value) (pickle.Value, error) {
	var seen keySet
	items := b.dec.Items(v)
	if len(items) >= 2 && b.keyOf(d, items[0]) == kAction {
		return b.traceEntry(d, items) // PyTorch writes 'action' first: skip the scan
	}
	for i := 0; i+1 < len(items); i += 2 {
		seen |= 1 << b.keyOf(d, items[i])
	}
	switch {
	case seen.has(kAction):
		return b.traceEntry(d, items)
	case seen.has(kState) && seen.has(kSize):
		return b.block(d, items)
	case seen.has(kBlocks):
		return b.segment(d, items)
	case seen.has(kRealSize):
		return b.historyEntry(d, items), nil
	case seen.has(kFilename) && seen.has(kName): // line may be missing
		return b.frame(d, items), nil
	}
	return v, nil
}

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

func (b *builder) frame(d *pickle.Decoder, items []pickle.Value) pickle.Value {
	var f Frame
	for i := 0; i+1 < len(items); i += 2 {
		val := items[i+1]
		switch b.keyOf(d, items[i]) {
		case kName:
			f.Name, _ = d.Str(val)
		case kFilename:
			f.Filename, _ = d.Str(val)
		case kLine:
			f.Line, _ = intOf(val)
		}
	}
	id, ok := b.frameIDs[f]
	if !ok {
		id = FrameID(len(b.snap.Frames))
		b.snap.Frames = append(b.snap.Frames, f)
		b.frameIDs[f] = id
	}
	return handle(tagFrame, int(id))
}

// stackOf reads a frames value: an interned stack, or an empty list.
func stackOf(v pickle.Value) StackID {
	if tag, idx := handleOf(v); tag == tagStack {
		return StackID(idx)
	}
	return 0
}

// text returns the text id of a string value, remembered by the decoder's
// string index: a trace entry's compile_context is the same memoized
// string over and over.
func (b *builder) text(d *pickle.Decoder, v pickle.Value) uint32 {
	if v.Kind == pickle.KindString && v.N < int64(len(b.textByStr)) && b.textByStr[v.N] != 0 {
		return b.textByStr[v.N] - 1
	}
	id := b.lookupText(d, v)
	if v.Kind == pickle.KindString && v.N < 1<<20 { // a bound on the cache, not on the strings
		b.textByStr = grow(b.textByStr, int(v.N))
		b.textByStr[v.N] = id + 1
	}
	return id
}

// actionOf returns the action a string value names, remembered by the
// decoder's string index like text.
func (b *builder) actionOf(d *pickle.Decoder, v pickle.Value) Action {
	if v.Kind == pickle.KindString && v.N < int64(len(b.actionByStr)) && b.actionByStr[v.N] != 0 {
		return b.actionByStr[v.N] - 1
	}
	s, _ := d.Str(v)
	a := parseAction(s)
	if v.Kind == pickle.KindString && v.N < 1<<20 {
		b.actionByStr = grow(b.actionByStr, int(v.N))
		b.actionByStr[v.N] = a + 1
	}
	return a
}

// grow returns s with room for index i.
func grow[T any](s []T, i int) []T {
	if i < len(s) {
		return s
	}
	return append(s, make([]T, i+1-len(s))...)
}

func (b *builder) lookupText(d *pickle.Decoder, v pickle.Value) uint32 {
	s, _ := d.Str(v)
	if s == "N/A" {
		s = ""
	}
	id, ok := b.textIDs[s]
	if !ok {
		id = uint32(len(b.snap.Texts))
		b.snap.Texts = append(b.snap.Texts, s)
		b.textIDs[s] = id
	}
	return id
}

// intOf reads an int; addresses above 2^63 come back as their bits.
func intOf(v pickle.Value) (int64, bool) {
	switch v.Kind {
	case pickle.KindInt, pickle.KindBigInt:
		return v.N, true
	case pickle.KindBool:
		return v.N, true
	}
	return 0, false
}

// Read decodes a snapshot from r. size is the stream length when known
// (-1 otherwise); progress, if not nil, is told how many bytes were read.
func Read(r io.Reader, size int64, progress func(int64)) (*Snapshot, error) {
	return readStored(r, size, progress, nil)
}

// readStored is Read with the count of bytes read of the input as stored
// (a gzip file's own bytes), which bounds the strings the decoder holds.
func readStored(r io.Reader, size int64, progress func(int64), stored func() int64) (*Snapshot, error) {
	b := newBuilder()
	b.size = size
	return b.read(pickle.NewDecoder(r, pickle.Options{Size: size, Hooks: b, Progress: progress, Stored: stored}))
}

// read decodes with dec, whose hooks are b, and assembles the snapshot.
func (b *builder) read(dec *pickle.Decoder) (*Snapshot, error) {
	b.dec = dec
	top, err := dec.Decode()
	if err != nil {
		return nil, err
	}
	if err := b.assemble(dec, top); err != nil {
		return nil, err
	}
	return b.snap, nil
}

func typeErr(what string, v pickle.Value) error {
	return fmt.Errorf("snapshot: %s is a %s", what, v.Kind)
}
