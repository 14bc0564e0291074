package snapshot

import (
	"fmt"
	"sort"
)

// GroupBy names how top and diff group allocations into rows.
type GroupBy string

// Groupings. Each row's key comes from one rule (docs/snapshot.md):
//
//	line      the innermost user frame(s) (--depth), library frames folded away
//	library   the library frame: the innermost frame in an installed library
//	          that is not plumbing (frames.go libraryFrame)
//	module    the chain of nn.Module forwards the allocation happened in
//	file      the file of the innermost Python frame
//	category  what the memory holds (category.go)
const (
	GroupLine     GroupBy = "line"
	GroupLibrary  GroupBy = "library"
	GroupModule   GroupBy = "module"
	GroupFile     GroupBy = "file"
	GroupCategory GroupBy = "category"
)

// Groupings lists every GroupBy, for flag help and tests.
var Groupings = []GroupBy{GroupLine, GroupLibrary, GroupModule, GroupFile, GroupCategory}

// ParseGroupBy checks a --group-by value ("" is line).
func ParseGroupBy(s string) (GroupBy, error) {
	if s == "" {
		return GroupLine, nil
	}
	for _, g := range Groupings {
		if string(g) == s {
			return g, nil
		}
	}
	return "", fmt.Errorf("unknown grouping %q: want line, library, module, file or category", s)
}

// viewsOf returns a stack's row key and frames under grouping by, and the
// candidate for the row's Via: the library frame for line rows, the user
// line for every other grouping. A stack the rule cannot place (no module
// on it, no Python frame) falls back to its line key, marked.
func (ss *Sites) viewsOf(stack StackID, by GroupBy, cat Category) (key string, frames []string, via string) {
	site := ss.Of(stack)
	if by == GroupLine || by == "" {
		return site.Key, site.Frames, site.Via
	}
	v := ss.views(stack)
	switch by {
	case GroupLibrary:
		key = v.library
	case GroupModule:
		key = v.module
	case GroupFile:
		key = v.file
	case GroupCategory:
		key = cat.String()
	}
	if key == "" {
		key = "(no " + string(by) + ") " + site.Key
	}
	return key, []string{key}, site.Key
}

// groupAcc sums allocations into rows. Row order and each row's Via are
// the tie rule: rows by bytes, largest first, equal bytes by key in byte
// order; Via is the candidate holding the most bytes of the row, equal
// bytes the smallest string. Neither depends on the order allocations are
// added in (the live set at a moment is a map).
type groupAcc struct {
	ss    *Sites
	by    GroupBy
	idx   map[string]int
	vias  []map[string]int64
	table SiteTable
}

func newGroupAcc(ss *Sites, by GroupBy, dev int) *groupAcc {
	return &groupAcc{ss: ss, by: by, idx: map[string]int{}, table: SiteTable{Device: dev, Sites: []SiteBytes{}}}
}

func (a *groupAcc) add(stack StackID, cat Category, size int64) {
	key, frames, via := a.ss.viewsOf(stack, a.by, cat)
	i, ok := a.idx[key]
	if !ok {
		i = len(a.table.Sites)
		a.idx[key] = i
		a.table.Sites = append(a.table.Sites, SiteBytes{Site: Site{Key: key, Frames: frames}})
		a.vias = append(a.vias, map[string]int64{})
	}
	a.table.Sites[i].Bytes += size
	a.table.Sites[i].Count++
	a.table.Total += size
	if via != "" {
		a.vias[i][via] += size
	}
}

// heaviest is the tie rule for Via: most bytes, then the smallest string.
func heaviest(m map[string]int64) string {
	best, bestN := "", int64(-1)
	for k, n := range m {
		if n > bestN || (n == bestN && k < best) {
			best, bestN = k, n
		}
	}
	return best
}

func (a *groupAcc) done() SiteTable {
	t := a.table
	for i := range t.Sites {
		t.Sites[i].Via = heaviest(a.vias[i])
		if t.Total > 0 {
			t.Sites[i].Share = float64(t.Sites[i].Bytes) / float64(t.Total)
		}
	}
	sortRows(t.Sites)
	return t
}

func sortRows(rows []SiteBytes) {
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Bytes != rows[j].Bytes {
			return rows[i].Bytes > rows[j].Bytes
		}
		return rows[i].Key < rows[j].Key
	})
}
