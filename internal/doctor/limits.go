package doctor

// /proc/<pid>/limits, the resource limits a process (and its children)
// run under:
//
//	Limit                     Soft Limit           Hard Limit           Units
//	Max processes             96365                96365                processes
//	Max open files            20000                20000                files
//	Max locked memory         8388608              8388608              bytes

import (
	"fmt"
	"strconv"
	"strings"
)

// Rlimit is one limit; -1 means unlimited.
type Rlimit struct {
	Soft, Hard int64
	Units      string
}

// Unlimited marks an "unlimited" limit.
const Unlimited = -1

// parseLimits reads the limits table, keyed by the limit's name ("Max
// open files"). Columns are fixed-width in the kernel's output but the
// names contain spaces, so values are taken from the right.
func parseLimits(s string) (map[string]Rlimit, error) {
	out := map[string]Rlimit{}
	for i, line := range strings.Split(s, "\n") {
		if i == 0 || strings.TrimSpace(line) == "" {
			continue // header
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			return nil, fmt.Errorf("limits line %d: %q", i+1, line)
		}
		// "Max nice priority 0 0" has no units column.
		units := ""
		vals := f[len(f)-2:]
		nameEnd := len(f) - 2
		if _, err := parseLimitValue(f[len(f)-1]); err != nil {
			units, vals, nameEnd = f[len(f)-1], f[len(f)-3:len(f)-1], len(f)-3
		}
		soft, err1 := parseLimitValue(vals[0])
		hard, err2 := parseLimitValue(vals[1])
		if err1 != nil || err2 != nil || nameEnd < 1 {
			return nil, fmt.Errorf("limits line %d: bad values in %q", i+1, line)
		}
		out[strings.Join(f[:nameEnd], " ")] = Rlimit{Soft: soft, Hard: hard, Units: units}
	}
	return out, nil
}

func parseLimitValue(s string) (int64, error) {
	if s == "unlimited" {
		return Unlimited, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// FormatLimit prints a limit value the way the limits file does: the
// number, or "unlimited".
func FormatLimit(n int64) string {
	if n == Unlimited {
		return "unlimited"
	}
	return strconv.FormatInt(n, 10)
}

type limitsResult struct {
	m     map[string]Rlimit
	shown string
	err   error
}

// ReadLimits reads <procRoot>/self/limits, keyed by the limit's name ("Max
// open files"): the limits this process hands to what it starts.
func ReadLimits(procRoot string) (map[string]Rlimit, error) {
	l := (&Host{ProcRoot: procRoot}).limits()
	return l.m, l.err
}

// limits reads <ProcRoot>/self/limits: the limits this shell hands to the
// jobs it starts.
func (h *Host) limits() limitsResult {
	return memo(h, "limits", func() limitsResult {
		s, shown, err := h.procFile("self/limits")
		if err != nil {
			return limitsResult{shown: shown, err: err}
		}
		m, err := parseLimits(s)
		return limitsResult{m, shown, err}
	})
}
