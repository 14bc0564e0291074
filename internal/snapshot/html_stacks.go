package snapshot

import "strconv"

// maxPageFrames bounds the frames kept of one stack (real stacks with C++
// frames reach about 150; a crafted file could hold millions).
const maxPageFrames = 400

// stackTable interns the stacks a page shows. Each stack is written as
// [site, frame, frame, ...]: indexes into the page's sites and frames, so
// a frame shared by thousands of stacks is written once.
type stackTable struct {
	s      *Snapshot
	ss     *Sites
	idx    map[StackID]int64
	site   map[string]int64
	frame  map[FrameID]int64
	Stacks [][]int64
	Sites  []string
	Frames []string
}

func newStackTable(s *Snapshot) *stackTable {
	return &stackTable{s: s, ss: NewSites(s, 1), idx: map[StackID]int64{}, site: map[string]int64{},
		frame: map[FrameID]int64{}, Stacks: [][]int64{}, Sites: []string{}, Frames: []string{}}
}

// ref returns the page's index of stack id, -1 for no stack.
func (t *stackTable) ref(id StackID) int64 {
	if id == 0 {
		return -1
	}
	if i, ok := t.idx[id]; ok {
		return i
	}
	key := t.ss.Of(id).Key
	si, ok := t.site[key]
	if !ok {
		si = int64(len(t.Sites))
		t.site[key] = si
		t.Sites = append(t.Sites, key)
	}
	frames := t.s.Stack(id)
	out := make([]int64, 1, 1+min(len(frames), maxPageFrames))
	out[0] = si
	for _, f := range frames[:min(len(frames), maxPageFrames)] {
		out = append(out, t.frameRef(f))
	}
	i := int64(len(t.Stacks))
	t.Stacks = append(t.Stacks, out)
	t.idx[id] = i
	return i
}

func (t *stackTable) frameRef(f FrameID) int64 {
	if i, ok := t.frame[f]; ok {
		return i
	}
	fr := t.s.Frames[f]
	text := fr.Name
	if fr.Kind() != FrameNative {
		text = fr.Filename + ":" + strconv.FormatInt(fr.Line, 10) + " " + fr.Name
	}
	i := int64(len(t.Frames))
	t.frame[f] = i
	t.Frames = append(t.Frames, text)
	return i
}
