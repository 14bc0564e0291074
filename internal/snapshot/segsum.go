package snapshot

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// vizPageSize is the 20 MiB "page" of PyTorch's segment summary.
const vizPageSize = 20 << 20

const vizLegend = `
Legend:
    [a     ] - a segment in the allocator
     ^-- a page 20.0MiB of memory in the segment
    a-z: pages filled with a single block's content
    ' ': page is completely free
    *: page if completely full with multiple blocks
    0-9: page is partially full with tensors of multiple blocks (9 == 90% full)
    (X% internal) - of the free memory, X% is free because we rounded the size of the allocation.
`

// MemoryVizStats returns exactly what `python -m torch.cuda._memory_viz
// stats FILE` prints for s (its segsum function, torch 2.x), including the
// blank line print() adds.
func MemoryVizStats(s *Snapshot) string {
	var out strings.Builder
	fmt.Fprintf(&out, "Summary of segments >= %s in size\n", vizBytes(vizPageSize))
	segs := make([]*Segment, len(s.Segments))
	for i := range s.Segments {
		segs[i] = &s.Segments[i]
	}
	// sorted(key=(total_size, calc_active)): a stable sort.
	sort.SliceStable(segs, func(i, j int) bool {
		a, b := segs[i], segs[j]
		if a.TotalSize != b.TotalSize {
			return a.TotalSize < b.TotalSize
		}
		return activeSize(a) < activeSize(b)
	})
	var reserved, allocated, freeExt, freeInt int64
	for _, seg := range segs {
		reserved += seg.TotalSize
		line, a, fe, fi := vizSegment(seg)
		allocated += a
		freeExt += fe
		freeInt += fi
		if seg.TotalSize >= vizPageSize {
			out.WriteString(line)
		}
	}
	fmt.Fprintf(&out, "segments: %d\n", len(s.Segments))
	fmt.Fprintf(&out, "total_reserved: %s\n", vizBytes(float64(reserved)))
	fmt.Fprintf(&out, "total_allocated: %s\n", vizBytes(float64(allocated)))
	fmt.Fprintf(&out, "total_free: %s\n", vizFree(freeExt, freeInt))
	out.WriteString(vizLegend)
	out.WriteString("\n")
	return out.String()
}

// activeSize is _memory_viz.calc_active: bytes of active_allocated blocks.
func activeSize(seg *Segment) int64 {
	var n int64
	for _, b := range seg.Blocks {
		if b.State == StateActiveAllocated {
			n += b.Size
		}
	}
	return n
}

type vizRange struct{ start, size int64 }

// vizSegment renders one segment line and returns its allocated (requested)
// bytes and external and internal free bytes.
func vizSegment(seg *Segment) (line string, allocated, freeExt, freeInt int64) {
	var ranges []vizRange
	var off int64
	for _, b := range seg.Blocks {
		if b.State == StateActiveAllocated {
			ranges = append(ranges, vizRange{off, b.Requested})
			allocated += b.Requested
			freeInt += b.Size - b.Requested
		} else {
			freeExt += b.Size
		}
		off += b.Size
	}
	body := vizBody(seg.TotalSize, ranges)
	stream := ""
	if seg.Stream != 0 {
		stream = fmt.Sprintf(" stream_%d", seg.Stream)
	}
	line = fmt.Sprintf("[%s] %s allocated, %s free%s\n", body, vizBytes(float64(seg.TotalSize)),
		vizFree(freeExt, freeInt), stream)
	return line, allocated, freeExt, freeInt
}

// vizBody draws the 20 MiB pages of a segment as segsum does, floating
// point accumulation order included.
func vizBody(total int64, ranges []vizRange) string {
	if total <= 0 {
		return ""
	}
	n := (total-1)/vizPageSize + 1
	if n > 1<<20 {
		n = 1 << 20 // a hostile total_size must not cost gigabytes
	}
	occupied := []byte(strings.Repeat(" ", int(n)))
	frac := make([]float64, n)
	for i, r := range ranges {
		end := r.start + r.size
		first, last := r.start/vizPageSize, (end-1)/vizPageSize+1
		m := byte('a' + i%26)
		for j := max(first, 0); j < last && j < n; j++ {
			s := max(r.start, j*vizPageSize)
			e := min(end, (j+1)*vizPageSize)
			frac[j] += float64(e-s) / vizPageSize
			if occupied[j] != ' ' {
				k := int(frac[j] * 10)
				occupied[j] = "0123456789*"[min(max(k, 0), 10)]
			} else {
				occupied[j] = m
			}
		}
	}
	return string(occupied)
}

// vizBytes is _memory_viz.Bytes: "%3.1f" with binary prefixes.
func vizBytes(num float64) string {
	for _, unit := range []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi"} {
		if math.Abs(num) < 1024.0 {
			return strconv.FormatFloat(num, 'f', 1, 64) + unit + "B"
		}
		num /= 1024.0
	}
	return strconv.FormatFloat(num, 'f', 1, 64) + "YiB"
}

// vizFree is _memory_viz._report_free.
func vizFree(ext, internal int64) string {
	total := ext + internal
	suffix := ""
	if total != 0 {
		pct := float64(internal) / float64(total) * 100
		suffix = fmt.Sprintf(" (%s%% internal)", strconv.FormatFloat(pct, 'f', 1, 64))
	}
	return vizBytes(float64(total)) + suffix
}
