package doctor

import (
	"fmt"
	"github.com/torchmem/torchmem/internal/cpulist"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/units"
)

// numaNode is one node from /sys/devices/system/node/nodeN.
type numaNode struct {
	ID       int
	CPUs     string
	MemBytes int64
}

func (h *Host) numaNodes() []numaNode {
	return memo(h, "numa", func() []numaNode {
		dir := filepath.Join(h.SysRoot, "devices", "system", "node")
		ents, _ := os.ReadDir(dir)
		var nodes []numaNode
		for _, e := range ents {
			n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "node"))
			if err != nil || !strings.HasPrefix(e.Name(), "node") {
				continue
			}
			node := numaNode{ID: n}
			node.CPUs, _, _ = h.sysFile(fmt.Sprintf("devices/system/node/node%d/cpulist", n))
			if s, _, err := h.sysFile(fmt.Sprintf("devices/system/node/node%d/meminfo", n)); err == nil {
				node.MemBytes = nodeMemTotal(s)
			}
			nodes = append(nodes, node)
		}
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
		return nodes
	})
}

// nodeMemTotal reads "Node 0 MemTotal:  4550128 kB".
func nodeMemTotal(s string) int64 {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[2] == "MemTotal:" {
			kb, _ := strconv.ParseInt(f[3], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func checkNUMANodes(h *Host) []Finding {
	nodes := h.numaNodes()
	src := "/sys/devices/system/node"
	if len(nodes) == 0 {
		return []Finding{newFinding("numa.nodes", "numa", Info, "numa_nodes.title_none").evMsg(src, "ev.no_nodes")}
	}
	var desc []string
	for _, n := range nodes {
		desc = append(desc, fmt.Sprintf("node%d: cpus %s, %s", n.ID, n.CPUs, units.Bytes(n.MemBytes)))
	}
	f := newFinding("numa.nodes", "numa", OK, plural(len(nodes), "numa_nodes.title_one", "numa_nodes.title"), len(nodes)).ev(src, strings.Join(desc, "; "))
	return []Finding{f}
}

// checkNUMAPolicy: on several nodes, the GPUs' nodes, zone_reclaim_mode,
// numa_balancing, and whether this shell's CPU set crosses nodes.
func checkNUMAPolicy(h *Host) []Finding {
	nodes := h.numaNodes()
	if len(nodes) < 2 {
		return nil
	}
	var out []Finding
	if n, raw, src, err := h.sysctlInt("vm/zone_reclaim_mode"); err == nil {
		f := newFinding("vm.zone_reclaim_mode", "numa", OK, "zone_reclaim.title", n).ev(src, raw)
		if n != 0 {
			f.Severity = Warn
			f = f.why("zone_reclaim.why").fix("zone_reclaim.fix").tune("vm.zone_reclaim_mode")
		}
		out = append(out, f)
	}
	if n, raw, src, err := h.sysctlInt("kernel/numa_balancing"); err == nil {
		f := newFinding("kernel.numa_balancing", "numa", OK, "numa_balancing.title", n).ev(src, raw)
		if n != 0 && len(h.gpus().devs) > 0 {
			f.Severity = Warn
			f = f.why("numa_balancing.why").fix("numa_balancing.fix").tune("kernel.numa_balancing")
		}
		out = append(out, f)
	}
	if s, src, err := h.procFile("self/status"); err == nil {
		cpus := statusField(s, "Cpus_allowed_list")
		mems := statusField(s, "Mems_allowed_list")
		f := newFinding("numa.policy", "numa", OK, "numa_policy.title").ev(src, "Cpus_allowed_list "+cpus+", Mems_allowed_list "+mems)
		if spansNodes(cpus, nodes) {
			f.Severity = Info
			f = f.titled("numa_policy.title_spans").why("numa_policy.why").fix("numa_policy.fix")
		}
		out = append(out, f)
	}
	return out
}

func statusField(s, key string) string {
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// spansNodes reports whether cpulist touches CPUs of more than one node.
func spansNodes(cpulist string, nodes []numaNode) bool {
	mine := cpuSet(cpulist)
	touched := 0
	for _, n := range nodes {
		for c := range cpuSet(n.CPUs) {
			if mine[c] {
				touched++
				break
			}
		}
	}
	return touched > 1
}

func cpuSet(list string) map[int]bool {
	set := map[int]bool{}
	cpus, _ := cpulist.Parse(list) // malformed: no CPUs, so no overlap is claimed
	for _, c := range cpus {
		set[c] = true
	}
	return set
}
