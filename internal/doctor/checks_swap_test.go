package doctor

import (
	"strings"
	"testing"
)

func TestSwapAdvice(t *testing.T) {
	const g = 1 << 30
	for _, c := range []struct {
		ram    uint64
		gpu    bool
		lo, hi uint64
	}{
		{8 * g, false, 2 * g, 4 * g},  // floors
		{24 * g, false, 2 * g, 4 * g}, // debian12
		{188 * g, false, 188 * g / 32, 188 * g / 8},
		{2048 * g, false, 16 * g, 64 * g},    // caps
		{126 * g, true, 2 * g, 126 * g / 16}, // h200
		{2048 * g, true, 8 * g, 32 * g},
	} {
		lo, hi := swapAdvice(c.ram, c.gpu)
		if lo != c.lo || hi != c.hi {
			t.Errorf("swapAdvice(%d GiB, gpu %v) = %d, %d; want %d, %d", c.ram/g, c.gpu, lo, hi, c.lo, c.hi)
		}
	}
}

func TestCheckSwapSizing(t *testing.T) {
	mem := func(ramKB, swapKB, freeKB string) map[string]string {
		return map[string]string{"proc/meminfo": "MemTotal: " + ramKB + " kB\nMemFree: 1000 kB\nSwapTotal: " + swapKB + " kB\nSwapFree: " + freeKB + " kB\n"}
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		sev   Severity
		title string
	}{
		{"none", mem("33554432", "0", "0"), Info, "no swap (advised: 2–4 GiB for 32.00 GiB RAM on a CPU host)"},
		{"fits", mem("33554432", "4194304", "4194304"), OK, "swap 4.00 GiB, 0 B in use"},
		{"small", mem("1073741824", "1048576", "1048576"), Info, "(small: advised 16–64 GiB"},
		{"large", mem("33554432", "33554432", "33554432"), Info, "(large: advised 2–4 GiB"},
		{"half used", mem("33554432", "4194304", "1000"), Warn, "in use"},
	} {
		fs := checkSwap(tree(t, c.files))
		if len(fs) != 1 || fs[0].Severity != c.sev || !strings.Contains(fs[0].Title, c.title) {
			t.Errorf("%s: %+v, want %v %q", c.name, fs, c.sev, c.title)
		}
	}
	if f := checkSwap(tree(t, mem("33554432", "0", "0")))[0]; !strings.Contains(f.Fix, "fallocate -l 2G /swapfile") {
		t.Errorf("fix %q", f.Fix)
	}
}
