// Package allocconf reads PYTORCH_CUDA_ALLOC_CONF (PYTORCH_ALLOC_CONF in
// torch >= 2.9), the options of PyTorch's CUDA caching allocator. doctor
// checks the text (Split); the allocator model of estimate follows the
// options that change what the allocator reserves (Parse). Hand-written:
// no Go library reads this format, and PyTorch's own tokenizer is C++
// (c10/core/AllocatorConfig.cpp).
package allocconf

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// The two variables. torch >= 2.9 reads PYTORCH_ALLOC_CONF first, older
// ones only PYTORCH_CUDA_ALLOC_CONF (doctor warns when both are set and
// differ).
const (
	EnvCUDA    = "PYTORCH_CUDA_ALLOC_CONF"
	EnvGeneric = "PYTORCH_ALLOC_CONF"
)

// FromEnv is the variable a current PyTorch's allocator is configured by
// and its value ("" and "" when neither is set).
func FromEnv(getenv func(string) string) (name, value string) {
	if v := getenv(EnvGeneric); v != "" {
		return EnvGeneric, v
	}
	if v := getenv(EnvCUDA); v != "" {
		return EnvCUDA, v
	}
	return "", ""
}

// Split splits "k:v,k:[a:1,b:2]" into ordered key/value pairs, keeping
// commas inside brackets.
func Split(s string) ([][2]string, error) {
	var out [][2]string
	depth, start := 0, 0
	flush := func(end int) error {
		item := strings.TrimSpace(s[start:end])
		if item == "" {
			return nil
		}
		k, v, ok := strings.Cut(item, ":")
		if !ok {
			return fmt.Errorf("option %q has no ':value'", item)
		}
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
		return nil
	}
	for i, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case r == ',' && depth == 0:
			if err := flush(i); err != nil {
				return nil, err
			}
			start = i + 1
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced [ ] in %q", s)
	}
	return out, flush(len(s))
}

// Conf is what the allocator model follows of the options. The zero Conf
// is PyTorch's default.
type Conf struct {
	// Expandable: expandable_segments:True (torch >= 2.1). One segment
	// per pool grows by mapping pages (2 MiB small, 20 MiB large) instead
	// of a cudaMalloc per segment.
	Expandable bool
	// MaxSplit: max_split_size_mb in bytes (0: none). Cached blocks this
	// large are not split for smaller requests.
	MaxSplit int64
	// Fraction: per_process_memory_fraction (torch >= 2.8; 0: none), as
	// torch.cuda.set_per_process_memory_fraction sets it.
	Fraction float64
	// Roundup: roundup_power2_divisions, by size interval: [0] for
	// requests under 2 MiB, [i] for [2^i MiB, 2^(i+1) MiB), [15] for 32
	// GiB and more (0 or 1: requests rounded to 512 bytes only). A request
	// is rounded up to the next of that many divisions of its power of 2.
	Roundup [RoundupIntervals]int
	// GCThreshold: garbage_collection_threshold (0: none), in (0, 1). When
	// a memory fraction is set, a request that needs a new segment while
	// reserved is over this share of the fraction's bytes first gives back
	// the cached whole segments unused the longest. Without a fraction it
	// does nothing (GCIdle).
	GCThreshold float64
	// AsyncBackend: backend:cudaMallocAsync, CUDA's own pool allocator,
	// which the model does not follow (the options above do nothing then).
	AsyncBackend bool
}

// RoundupIntervals: roundup_power2_divisions' size intervals, 1 MiB to 64
// GiB (c10's kRoundUpPowerOfTwoIntervals).
const RoundupIntervals = 16

// Parse reads the options the model follows from s; the others are left
// to doctor to check. An error names the option.
func Parse(s string) (Conf, error) {
	kvs, err := Split(s)
	if err != nil {
		return Conf{}, err
	}
	var c Conf
	for _, kv := range kvs {
		k, v := kv[0], kv[1]
		switch k {
		case "expandable_segments":
			c.Expandable, err = parseBool(v)
		case "max_split_size_mb":
			var mb float64
			mb, err = strconv.ParseFloat(v, 64)
			if err == nil && !(mb > 20 && mb < 1<<30) { // PyTorch refuses 20 MB and less
				err = fmt.Errorf("want more than 20")
			}
			c.MaxSplit = int64(mb * (1 << 20))
		case "per_process_memory_fraction":
			c.Fraction, err = strconv.ParseFloat(v, 64)
			if err == nil && !(c.Fraction > 0 && c.Fraction <= 1) {
				err = fmt.Errorf("want a fraction in (0, 1]")
			}
		case "garbage_collection_threshold":
			c.GCThreshold, err = strconv.ParseFloat(v, 64)
			if err == nil && !(c.GCThreshold > 0 && c.GCThreshold < 1) {
				err = fmt.Errorf("want a fraction in (0, 1)") // as c10 refuses it
			}
		case "backend":
			c.AsyncBackend = v == "cudaMallocAsync"
		case "roundup_power2_divisions":
			c.Roundup, err = parseRoundup(v)
		}
		if err != nil {
			return Conf{}, fmt.Errorf("option %s:%s: %w", k, v, unwrapNum(err))
		}
	}
	return c, nil
}

// parseRoundup reads roundup_power2_divisions: N for every size, or
// [256:1,512:2,>:4] by interval (a size in MB, a power of 2, where its
// interval starts; the first entry's value also covers the intervals
// before it; ">" every interval after the last), as c10's
// AllocatorConfig parses it. Values are powers of 2.
func parseRoundup(v string) (out [RoundupIntervals]int, err error) {
	pow2 := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n&(n-1) != 0 {
			return 0, fmt.Errorf("%q is not a power of 2", s)
		}
		return n, nil
	}
	inner, list := strings.CutPrefix(v, "[")
	if !list {
		n, err := pow2(v)
		for i := range out {
			out[i] = n
		}
		return out, err
	}
	inner, ok := strings.CutSuffix(inner, "]")
	if !ok {
		return out, fmt.Errorf("no closing ]")
	}
	last, first := 0, true
	for _, item := range strings.Split(inner, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			return out, fmt.Errorf("%q is not size:divisions", item)
		}
		n, err := pow2(strings.TrimSpace(val))
		if err != nil {
			return out, err
		}
		if k = strings.TrimSpace(k); k == ">" {
			for i := last + 1; i < RoundupIntervals; i++ {
				out[i] = n
			}
			continue
		}
		mb, err := pow2(k)
		if err != nil {
			return out, err
		}
		i := min(bits.Len(uint(mb))-1, RoundupIntervals-1)
		if first {
			for j := 0; j < i; j++ {
				out[j] = n
			}
			first = false
		}
		out[i], last = n, i
	}
	return out, nil
}

func parseBool(v string) (bool, error) {
	switch v {
	case "True", "true":
		return true, nil
	case "False", "false":
		return false, nil
	}
	return false, fmt.Errorf("want True or False")
}

// unwrapNum keeps strconv's errors to their reason.
func unwrapNum(err error) error {
	if ne, ok := err.(*strconv.NumError); ok {
		return ne.Err
	}
	return err
}

// String is the options the model follows, as they would be written
// ("" for the default).
func (c Conf) String() string {
	var parts []string
	if c.AsyncBackend {
		parts = append(parts, "backend:cudaMallocAsync")
	}
	if c.Expandable {
		parts = append(parts, "expandable_segments:True")
	}
	if c.MaxSplit > 0 {
		parts = append(parts, "max_split_size_mb:"+strconv.FormatFloat(float64(c.MaxSplit)/(1<<20), 'f', -1, 64))
	}
	if c.Roundup != ([RoundupIntervals]int{}) {
		parts = append(parts, "roundup_power2_divisions:"+roundupString(c.Roundup))
	}
	if c.GCThreshold > 0 {
		parts = append(parts, "garbage_collection_threshold:"+strconv.FormatFloat(c.GCThreshold, 'f', -1, 64))
	}
	if c.Fraction > 0 {
		parts = append(parts, "per_process_memory_fraction:"+strconv.FormatFloat(c.Fraction, 'f', -1, 64))
	}
	return strings.Join(parts, ",")
}

// Why garbage_collection_threshold does nothing (GCIdle).
const (
	// GCNoFraction: the allocator collects only when a memory fraction is
	// set (set_fraction in c10's malloc): by the program
	// (torch.cuda.set_per_process_memory_fraction) or by
	// per_process_memory_fraction. Guides that recommend
	// "garbage_collection_threshold:0.6,max_split_size_mb:128" rarely say so.
	GCNoFraction = "no_fraction"
	// GCExpandable: the collection skips blocks of expandable segments,
	// and under expandable_segments:True every block is one.
	GCExpandable = "expandable"
	// GCAsync: backend:cudaMallocAsync has no such collection.
	GCAsync = "async"
)

// GCIdle says why garbage_collection_threshold does nothing for a job
// whose memory fraction is c's (0: none set; a caller that knows the
// program's own sets it), or "" when it acts or is not set.
func (c Conf) GCIdle() string {
	switch {
	case c.GCThreshold <= 0:
		return ""
	case c.AsyncBackend:
		return GCAsync
	case c.Expandable:
		return GCExpandable
	case c.Fraction <= 0:
		return GCNoFraction
	}
	return ""
}

// roundupString writes divisions back: N when one for all, else the list.
func roundupString(r [RoundupIntervals]int) string {
	same := true
	for _, n := range r {
		same = same && n == r[0]
	}
	if same {
		return strconv.Itoa(r[0])
	}
	var items []string
	for i, n := range r {
		items = append(items, strconv.Itoa(1<<i)+":"+strconv.Itoa(max(n, 1)))
	}
	return "[" + strings.Join(items, ",") + "]"
}
