package supervisor

import (
	"fmt"
	"github.com/torchmem/torchmem/internal/cpulist"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/gpu"
)

// numaChoice is the resolved --numa setting.
type numaChoice struct {
	Node int // -1: no binding
	CPUs []int
	// Notice is the catalog id of the line explaining a no-op ("" for
	// none), Why the id of its reason and WhyArgs the reason's arguments.
	Notice  string
	Why     string
	WhyArgs []any
}

// say is the notice in t's language.
func (c numaChoice) say(t func(string, ...any) string) string {
	if c.Why == "" {
		return t(c.Notice)
	}
	return t(c.Notice, t(c.Why, c.WhyArgs...))
}

// resolveNUMA turns --numa auto|N|off into a node. auto picks the node of
// the job's GPUs (CUDA_VISIBLE_DEVICES, else all) when they share one; with
// a single NUMA node there is nothing to bind and auto is a no-op.
func resolveNUMA(mode, sysRoot string, devs []gpu.Device, visible string) (numaChoice, error) {
	nodes := listNodes(sysRoot)
	switch mode {
	case "", "off":
		return numaChoice{Node: -1}, nil
	case "auto":
		if len(nodes) <= 1 {
			return numaChoice{Node: -1, Notice: "numa.one_node"}, nil
		}
		node, why, args := gpuNode(devs, visible)
		if node < 0 {
			return numaChoice{Node: -1, Notice: "numa.not_binding", Why: why, WhyArgs: args}, nil
		}
		return nodeChoice(sysRoot, node)
	}
	n, err := strconv.Atoi(mode)
	if err != nil || n < 0 {
		return numaChoice{}, fmt.Errorf("--numa %q: want auto, off or a node number", mode)
	}
	if len(nodes) > 0 && !slices.Contains(nodes, n) {
		return numaChoice{}, fmt.Errorf("--numa %d: no such NUMA node (have %v)", n, nodes)
	}
	return nodeChoice(sysRoot, n)
}

func nodeChoice(sysRoot string, node int) (numaChoice, error) {
	path := filepath.Join(sysRoot, "devices/system/node", fmt.Sprintf("node%d", node), "cpulist")
	b, err := os.ReadFile(path)
	if err != nil {
		return numaChoice{Node: node}, nil // memory binding still works
	}
	cpus, err := cpulist.Parse(string(b))
	if err != nil {
		return numaChoice{}, fmt.Errorf("parse %s: %w", path, err)
	}
	return numaChoice{Node: node, CPUs: cpus}, nil
}

// gpuNode returns the single NUMA node of the visible GPUs, or -1 and why
// (a catalog id and its arguments).
func gpuNode(devs []gpu.Device, visible string) (int, string, []any) {
	if len(devs) == 0 {
		return -1, "numa.no_gpu", nil
	}
	want := map[string]bool{}
	for _, v := range strings.Split(visible, ",") {
		if v = strings.TrimSpace(v); v != "" {
			want[v] = true
		}
	}
	node := -2
	for _, d := range devs {
		if len(want) > 0 && !want[strconv.Itoa(d.Index)] && !want[d.UUID] {
			continue
		}
		if d.NUMANode < 0 {
			return -1, "numa.gpu_no_node", []any{d.Index}
		}
		if node != -2 && node != d.NUMANode {
			return -1, "numa.span", nil
		}
		node = d.NUMANode
	}
	if node < 0 {
		return -1, "numa.no_match", nil
	}
	return node, "", nil
}

func listNodes(sysRoot string) []int {
	m, _ := filepath.Glob(filepath.Join(sysRoot, "devices/system/node/node[0-9]*"))
	var out []int
	for _, p := range m {
		if n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), "node")); err == nil {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}
