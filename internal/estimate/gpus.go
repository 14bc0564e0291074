package estimate

import (
	"fmt"
	"strings"
)

// GPU is a board by name: the memory nvidia-smi reports as its total and
// its compute capability (which sizes the cuBLAS workspace).
type GPU struct {
	Name              string `json:"name"`
	MemoryBytes       int64  `json:"memory_bytes"`
	ComputeCapability int    `json:"compute_capability"`
}

// The units a GPU's memory can be given in: "80GB" is decimal (80·10^9
// bytes, 74.5 GiB), "80GiB" binary (80·2^30), a bare number bytes.
const (
	UnitDecimal = "decimal"
	UnitBinary  = "binary"
	UnitBytes   = "bytes"
)

const mib = 1 << 20

// gpuTable: nvidia-smi's "Total" memory (MiB) of each board, as pasted
// nvidia-smi tables in public bug reports print it (GDDR boards with ECC
// off: ECC on takes about 1/16 of it, L20 46068 MiB against 49140).
var gpuTable = []GPU{
	{"H200", 143771 * mib, 90},
	{"H100-80GB", 81559 * mib, 90},
	{"H100-94GB", 95830 * mib, 90},
	{"GH200", 97871 * mib, 90},
	{"B200", 183359 * mib, 100},
	{"A100-40GB", 40960 * mib, 80},
	{"A100-80GB", 81920 * mib, 80},
	{"A10", 23028 * mib, 86},
	{"A10G", 23028 * mib, 86},
	{"A30", 24576 * mib, 80},
	{"A40", 46068 * mib, 86},
	{"A6000", 49140 * mib, 86},
	{"L40S", 46068 * mib, 89},
	{"L40", 46068 * mib, 89},
	{"L4", 23034 * mib, 89},
	{"T4", 15360 * mib, 75},
	{"V100-16GB", 16384 * mib, 70},
	{"V100-32GB", 32768 * mib, 70},
	{"RTX-4090", 24564 * mib, 89},
	{"RTX-3090", 24576 * mib, 86},
	{"RTX-4080", 16376 * mib, 89},
	{"RTX-3080", 10240 * mib, 86},
	// what the Chinese guides' users rent and own: the export variants,
	// consumer cards of 11-32 GB
	{"A800-80GB", 81920 * mib, 80},
	{"H800", 81559 * mib, 90},
	{"H20", 97871 * mib, 90},
	{"L20", 46068 * mib, 89},
	{"V100S-32GB", 32768 * mib, 70},
	{"A5000", 24564 * mib, 86},
	{"RTX-5090", 32607 * mib, 120},
	{"RTX-4090D", 24564 * mib, 89},
	{"RTX-4080-SUPER", 16376 * mib, 89},
	{"RTX-4070Ti", 12282 * mib, 89},
	{"RTX-4070", 12282 * mib, 89},
	{"RTX-3090Ti", 24564 * mib, 86},
	{"RTX-3060", 12288 * mib, 86},
	{"RTX-2080Ti", 11264 * mib, 75},
}

func normGPU(s string) string {
	r := strings.NewReplacer(" ", "", "-", "", "_", "", "nvidia", "", "geforce", "", "tesla", "", "sxm4", "",
		"sxm5", "", "sxm2", "", "pcie", "", "hbm3", "", "nvl", "")
	return r.Replace(strings.ToLower(s))
}

// LookupGPU finds a GPU by name ("H100-80GB", "h100", "NVIDIA A100-SXM4-80GB",
// "rtx 4090"); a family name with several sizes ("A100") is an error.
func LookupGPU(name string) (GPU, error) {
	want := normGPU(name)
	var hits []GPU
	// the longest known name want begins with ("H200-141GB" is an H200,
	// not an H20), unless a known name goes on past want ("A100" names
	// both A100 sizes): then the choice is the caller's
	var within GPU
	withinLen, longer := 0, false
	for _, g := range gpuTable {
		n := normGPU(g.Name)
		if n == want {
			return g, nil
		}
		if strings.HasPrefix(want, n) && len(n) > withinLen {
			within, withinLen = g, len(n)
		}
		longer = longer || strings.HasPrefix(n, want)
		if strings.HasPrefix(n, want) || strings.HasPrefix(want, n) {
			hits = append(hits, g)
		}
	}
	if withinLen > 0 && !longer {
		return within, nil
	}
	switch len(hits) {
	case 0:
		return GPU{}, fmt.Errorf("unknown GPU %q; known: %s (or give --gpu-memory SIZE)", name, strings.Join(GPUNames(), ", "))
	case 1:
		return hits[0], nil
	}
	names := make([]string, len(hits))
	for i, h := range hits {
		names[i] = h.Name
	}
	return GPU{}, fmt.Errorf("GPU %q is ambiguous: %s", name, strings.Join(names, ", "))
}

// GPUNames lists the known boards.
func GPUNames() []string {
	out := make([]string, len(gpuTable))
	for i, g := range gpuTable {
		out[i] = g.Name
	}
	return out
}
