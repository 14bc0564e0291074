package snapshot

import (
	"strconv"
	"strings"
)

// FrameKind classifies a frame for grouping allocations by site.
type FrameKind uint8

// Frame kinds: code of the user, Python library code (torch,
// site-packages, the standard library), and native (C++) frames.
const (
	FrameUser FrameKind = iota
	FrameLibrary
	FrameNative
)

// Kind classifies f: Python frames have a .py file and a line number; the
// user's code is any Python file outside installed packages and the
// interpreter's own library.
func (f Frame) Kind() FrameKind {
	if !strings.HasSuffix(f.Filename, ".py") || f.Line <= 0 {
		return FrameNative
	}
	for _, lib := range []string{"/site-packages/", "/dist-packages/", "/lib/python", "/torch/"} {
		if strings.Contains(f.Filename, lib) {
			return FrameLibrary
		}
	}
	return FrameUser
}

// Short renders f as "file.py:123 name" (base name of the file only).
func (f Frame) Short() string {
	if f.Kind() == FrameNative {
		return f.Name
	}
	file := f.Filename[strings.LastIndexByte(f.Filename, '/')+1:]
	return file + ":" + strconv.FormatInt(f.Line, 10) + " " + f.Name
}

// Site is where a group of allocations comes from: the innermost Depth
// user frames of their stacks (library frames folded away), and Via, the
// innermost library Python frame that did the allocating for it.
type Site struct {
	Key    string   `json:"site"`
	Frames []string `json:"frames"`
	Via    string   `json:"via,omitempty"`
}

// NoStack is the site of allocations recorded without a stack.
const NoStack = "<no stack recorded>"

// BeforeTrace is the site of allocations made before the trace's first
// entry and freed during it: their stack was never recorded.
const BeforeTrace = "<allocated before the trace>"

// stackBeforeTrace marks such allocations in place of a StackID.
const stackBeforeTrace = StackID(1<<32 - 1)

// Sites computes and caches the site of each stack for one depth.
type Sites struct {
	snap      *Snapshot
	depth     int
	cache     map[StackID]*Site
	viewCache map[StackID]stackViews
}

// NewSites groups stacks of s by their innermost depth user frames
// (depth < 1 means 1).
func NewSites(s *Snapshot, depth int) *Sites {
	return &Sites{snap: s, depth: max(depth, 1), cache: map[StackID]*Site{}}
}

// Of returns the site of a stack.
func (ss *Sites) Of(id StackID) *Site {
	if site, ok := ss.cache[id]; ok {
		return site
	}
	if id == stackBeforeTrace {
		site := &Site{Key: BeforeTrace, Frames: []string{BeforeTrace}}
		ss.cache[id] = site
		return site
	}
	site := ss.compute(ss.snap.Stack(id))
	ss.cache[id] = site
	return site
}

func (ss *Sites) compute(stack []FrameID) *Site {
	var site Site
	var firstPy, firstNative string
	firstUser := -1
	for i, fid := range stack {
		f := ss.snap.Frames[fid]
		switch f.Kind() {
		case FrameUser:
			if len(site.Frames) < ss.depth {
				site.Frames = append(site.Frames, f.Short())
			}
			if firstUser < 0 {
				firstUser = i
			}
		case FrameLibrary:
			if firstPy == "" {
				firstPy = f.Short()
			}
		case FrameNative:
			if firstNative == "" && !allocatorFrame(f.Name) {
				firstNative = f.Name
			}
		}
	}
	switch {
	case len(site.Frames) > 0:
		// Via: the library frame rule over the frames inside the user's
		// line (library code the user called, not code that called the user).
		site.Via = ss.snap.libraryFrame(stack[:firstUser])
	case firstPy != "":
		site.Frames = []string{firstPy}
	case firstNative != "":
		site.Frames = []string{firstNative}
	default:
		site.Frames = []string{NoStack}
	}
	site.Key = strings.Join(site.Frames, " < ")
	return &site
}

// allocatorFrame reports frames of the allocator and the stack capture
// itself, which every allocation shares and so say nothing.
func allocatorFrame(name string) bool {
	for _, p := range []string{"torch::unwind", "torch::CapturedTraceback", "torch::cuda::", "c10::cuda::CUDACachingAllocator",
		"at::detail::empty", "at::native::empty", "at::empty"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return name == "??" || name == ""
}
