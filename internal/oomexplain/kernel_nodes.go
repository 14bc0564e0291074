package oomexplain

// Per-node lines of show_mem (mm/show_mem.c), one set per NUMA node
// (source: MystenLabs/sui issue #18768, 5.x; raspberrypi/linux #3872, 6.x;
// Alibaba Cloud Linux docs, 4.19):
//
//	Node 0 active_anon:968kB inactive_anon:32280kB active_file:101656kB inactive_file:27096kB ... shmem:10236kB ...
//	Node 0 DMA32 free:249524kB min:2384kB low:4696kB high:7008kB reserved_highatomic:0KB ... present:2490048kB managed:2423956kB ...
//	Node 0 Normal free:65140kB min:65180kB low:128456kB high:191732kB ...
//	DMA free:519112kB boost:7216kB min:10428kB low:11228kB high:12028kB ...   (6.x without NUMA: no "Node N")
//
// "Node 0 Normal: 924*4kB (UME) ..." (the buddy lists), "Node 0 DMA
// per-cpu:" and "Node 0 hugepages_total=..." are other lines.

import (
	"strconv"
	"strings"
)

var zoneNames = map[string]bool{"DMA": true, "DMA32": true, "Normal": true, "HighMem": true, "Movable": true, "Device": true}

// nodeLine: a zone line or a node's counters line.
func nodeLine(t string) bool {
	_, rest, ok := cutNode(t)
	if !ok {
		return false
	}
	zone, tail, _ := strings.Cut(rest, " ")
	if zoneNames[zone] {
		return strings.HasPrefix(tail, "free:")
	}
	return rest != t && strings.HasPrefix(rest, "active_anon:")
}

// cutNode splits "Node 3 rest" into 3 and rest; a line without the
// prefix (non-NUMA 6.x zone lines) is node 0.
func cutNode(t string) (int, string, bool) {
	rest, ok := strings.CutPrefix(t, "Node ")
	if !ok {
		return 0, t, strings.Contains(t, " free:")
	}
	num, rest, ok := strings.Cut(rest, " ")
	n, err := strconv.Atoi(num)
	return n, rest, ok && err == nil && n >= 0 && n < 1<<16
}

// parseNodeLine records a zone or counters line in its node. Values are
// set, not added, so a line re-read after a wrapped continuation is
// joined counts once.
func parseNodeLine(ko *KernelOOM, t string) {
	id, rest, _ := cutNode(t)
	n := nodeOf(ko, id)
	kv := kbFields(rest)
	zone, _, _ := strings.Cut(rest, " ")
	if !zoneNames[zone] {
		n.AnonBytes = sumKB(kv, "active_anon", "inactive_anon")
		n.FileBytes = sumKB(kv, "active_file", "inactive_file")
		n.ShmemBytes = sumKB(kv, "shmem")
		return
	}
	z := ZoneMem{Zone: zone, Watermarks: Watermarks{FreeBytes: sumKB(kv, "free"), MinBytes: sumKB(kv, "min"),
		LowBytes: sumKB(kv, "low"), HighBytes: sumKB(kv, "high"), PresentBytes: sumKB(kv, "present"), ManagedBytes: sumKB(kv, "managed")}}
	setZone(n, z)
}

// nodeOf returns node id's entry, added if new (bounded: a host has at
// most a few dozen nodes).
func nodeOf(ko *KernelOOM, id int) *NodeMem {
	for i := range ko.Nodes {
		if ko.Nodes[i].Node == id {
			return &ko.Nodes[i]
		}
	}
	if len(ko.Nodes) >= 64 {
		return &NodeMem{}
	}
	ko.Nodes = append(ko.Nodes, NodeMem{Node: id})
	return &ko.Nodes[len(ko.Nodes)-1]
}

func setZone(n *NodeMem, z ZoneMem) {
	replaced := false
	for i := range n.Zones {
		if n.Zones[i].Zone == z.Zone {
			n.Zones[i], replaced = z, true
		}
	}
	if !replaced && len(n.Zones) < 8 {
		n.Zones = append(n.Zones, z)
	}
	n.Watermarks = Watermarks{}
	for _, z := range n.Zones {
		n.Watermarks = n.plus(z.Watermarks)
	}
}

// plus sums two sets of watermarks, figure by figure.
func (w Watermarks) plus(o Watermarks) Watermarks {
	return Watermarks{FreeBytes: addPtr(w.FreeBytes, o.FreeBytes), MinBytes: addPtr(w.MinBytes, o.MinBytes),
		LowBytes: addPtr(w.LowBytes, o.LowBytes), HighBytes: addPtr(w.HighBytes, o.HighBytes),
		PresentBytes: addPtr(w.PresentBytes, o.PresentBytes), ManagedBytes: addPtr(w.ManagedBytes, o.ManagedBytes)}
}

// addPtr adds b to a; absent stays absent only when both are.
func addPtr(a, b *int64) *int64 {
	switch {
	case b == nil:
		return a
	case a == nil:
		return i64Ptr(*b)
	}
	return i64Ptr(*a + *b)
}

// kbFields reads "key:123kB" fields (any case of the unit).
func kbFields(s string) map[string]int64 {
	kv := map[string]int64{}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, ":")
		if !ok {
			continue
		}
		v = strings.TrimSuffix(strings.TrimSuffix(v, "kB"), "KB")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			kv[k] = kb(n)
		}
	}
	return kv
}

// sumKB adds the values of keys, nil unless every key is present (a
// partial sum would understate the figure).
func sumKB(kv map[string]int64, keys ...string) *int64 {
	var sum int64
	for _, k := range keys {
		v, ok := kv[k]
		if !ok {
			return nil
		}
		sum += v
	}
	return i64Ptr(sum)
}
