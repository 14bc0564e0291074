// Package tui renders Samples for people: the live `torchmem top` view
// (bubbletea + lipgloss) and, through the same Render, its --once table.
// Lines are laid out for 80 columns and cut to the terminal's width. It
// also holds torchmem run --tui's live view of a supervised job (RunView).
package tui

import (
	"sort"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/sample"
)

// SortKeys are the orders Render knows, in the order the s key cycles them.
var SortKeys = []string{"pss", "rss", "gpu", "uss", "swap", "pid"}

// ValidSort reports whether key is one of SortKeys.
func ValidSort(key string) bool {
	for _, k := range SortKeys {
		if k == key {
			return true
		}
	}
	return false
}

// nextSort returns the key after key in SortKeys.
func nextSort(key string) string {
	for i, k := range SortKeys {
		if k == key {
			return SortKeys[(i+1)%len(SortKeys)]
		}
	}
	return SortKeys[0]
}

func procKey(p jobs.Process, key string) int64 {
	switch key {
	case "rss":
		return u(p.RSSBytes)
	case "pss":
		return u(p.PSSBytes)
	case "uss":
		return u(p.USSBytes)
	case "swap":
		return u(p.SwapBytes)
	case "gpu":
		if p.GPUBytes != nil {
			return *p.GPUBytes
		}
	}
	return 0
}

func jobKey(j sample.Job, key string) int64 {
	t := j.Totals
	switch key {
	case "rss":
		return int64(t.RSSBytes)
	case "pss":
		return int64(t.PSSBytes)
	case "uss":
		return int64(t.USSBytes)
	case "swap":
		return int64(t.SwapBytes)
	case "gpu":
		return t.GPUBytes
	}
	return 0
}

func u(p *uint64) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

// SelectJobs returns the jobs --filter keeps, in --sort order (largest
// first for a memory key, lowest root PID first for "pid"): what Render
// shows, for `top --json` to print the same selection.
func SelectJobs(in []sample.Job, key, filter string) []sample.Job {
	return orderJobs(in, key, filter, false)
}

// orderJobs filters and sorts jobs: largest first for a memory key, lowest
// PID first for "pid"; the other way round when reverse.
func orderJobs(in []sample.Job, key, filter string, reverse bool) []sample.Job {
	out := make([]sample.Job, 0, len(in))
	for _, j := range in {
		if matches(j, filter) {
			out = append(out, j)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if key == "pid" {
			return (out[a].RootPID < out[b].RootPID) != reverse
		}
		ka, kb := jobKey(out[a], key), jobKey(out[b], key)
		if reverse {
			return ka < kb
		}
		return ka > kb
	})
	return out
}

// matches: a case-insensitive substring of any member's PID, name or
// command line.
func matches(j sample.Job, filter string) bool {
	if filter == "" {
		return true
	}
	f := strings.ToLower(filter)
	for _, p := range j.Processes {
		if strings.Contains(strconv.Itoa(p.PID), f) || strings.Contains(strings.ToLower(p.Name), f) ||
			strings.Contains(strings.ToLower(strings.Join(p.Cmdline, " ")), f) {
			return true
		}
	}
	return false
}

// node is a process with its children, for sorting siblings in a tree.
type node struct {
	p        jobs.Process
	children []*node
}

// treeOf rebuilds the tree of a job's processes (they come depth-first).
func treeOf(procs []jobs.Process) []*node {
	var roots []*node
	var stack []*node
	for _, p := range procs {
		n := &node{p: p}
		for len(stack) > 0 && stack[len(stack)-1].p.Depth >= p.Depth {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			roots = append(roots, n)
		} else {
			parent := stack[len(stack)-1]
			parent.children = append(parent.children, n)
		}
		stack = append(stack, n)
	}
	return roots
}

// sortNodes orders siblings as orderJobs orders jobs.
func sortNodes(ns []*node, key string, reverse bool) {
	sort.SliceStable(ns, func(a, b int) bool {
		if key == "pid" {
			return (ns[a].p.PID < ns[b].p.PID) != reverse
		}
		ka, kb := procKey(ns[a].p, key), procKey(ns[b].p, key)
		if reverse {
			return ka < kb
		}
		return ka > kb
	})
	for _, n := range ns {
		sortNodes(n.children, key, reverse)
	}
}
