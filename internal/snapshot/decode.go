package snapshot

import (
	"fmt"
	"io"

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
