// Package units parses and prints memory sizes the way this field writes
// them: "64G" and "200M" on command lines (powers of 1024, like systemd and
// cgroups), "24GiB"/"24GB" in configs, and "1.50 GiB" in PyTorch's messages.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var suffixes = []struct {
	s    string
	mult float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40}, {"pib", 1 << 50},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"pb", 1e15},
	// Bare letters follow cgroup/systemd/ulimit convention: binary multiples.
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"p", 1 << 50},
	{"b", 1}, {"", 1},
}

// ParseBytes parses "123", "200M", "64G", "1.5GiB", "512 MB" into bytes.
// "max" and "infinity" (cgroup spellings of no limit) return math.MaxInt64.
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "max" || t == "infinity" || t == "unlimited" {
		return math.MaxInt64, nil
	}
	for _, suf := range suffixes {
		if !strings.HasSuffix(t, suf.s) {
			continue
		}
		num := strings.TrimSpace(strings.TrimSuffix(t, suf.s))
		if num == "" {
			continue
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		v := f * suf.mult
		if v >= math.MaxInt64 {
			return 0, fmt.Errorf("size %q is too large", s)
		}
		return int64(math.Round(v)), nil
	}
	return 0, fmt.Errorf("invalid size %q (want e.g. 512M, 64G, 1.5GiB)", s)
}

// ParsePercent parses "90%" or "90" or "0.9" into a fraction in [0, 1].
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("invalid percentage %q (want e.g. 90%%)", s)
	}
	if pct || f > 1 {
		f /= 100
	}
	if f < 0 || f > 1 {
		return 0, fmt.Errorf("percentage %q is outside 0-100%%", s)
	}
	return f, nil
}

// Bytes formats n with binary units and two decimals, the way PyTorch's
// OOM messages and memory_summary print sizes ("1.50 GiB", "512.00 MiB").
func Bytes(n int64) string {
	if n < 0 {
		return "-" + Bytes(-n)
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.2f %s", f, units[i])
}

// Short formats n compactly for narrow columns: "1.5G", "133M", "980K".
func Short(n int64) string {
	if n < 0 {
		return "-" + Short(-n)
	}
	units := []string{"B", "K", "M", "G", "T", "P"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	switch {
	case i == 0:
		return fmt.Sprintf("%dB", n)
	case f < 10:
		return fmt.Sprintf("%.1f%s", f, units[i])
	default:
		return fmt.Sprintf("%.0f%s", f, units[i])
	}
}
