package procfs

// /proc/<pid>/limits, the resource limits a process (and what it starts)
// runs under; the header line is optional to the parser:
//
//	Limit                     Soft Limit           Hard Limit           Units
//	Max processes             96365                96365                processes
//	Max open files            20000                20000                files
//	Max locked memory         8388608              8388608              bytes
//	Max nice priority         0                    0

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Unlimited is the value of a limit the kernel prints as "unlimited".
const Unlimited = -1

// Limit is one row of the limits table: the soft and hard values
// (Unlimited for "unlimited") and the units column, "" where the kernel
// prints none ("Max nice priority").
type Limit struct {
	Soft, Hard int64
	Units      string
}

// Limits is the limits table keyed by the kernel's name of each limit
// ("Max open files"). A name missing from the map was not in the file.
type Limits map[string]Limit

// Limits reads <root>/<pid>/limits.
func (f FS) Limits(pid int) (Limits, error) {
	return f.readLimits(f.pidPath(pid, "limits"))
}

// SelfLimits reads <root>/self/limits: the limits this process hands to
// the processes it starts.
func (f FS) SelfLimits() (Limits, error) {
	return f.readLimits(f.path("self", "limits"))
}

func (f FS) readLimits(path string) (Limits, error) {
	b, err := readSmall(path)
	if err != nil {
		return nil, err
	}
	l, err := parseLimits(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return l, nil
}

// parseLimits reads the limits table. Columns are fixed-width in the
// kernel's output but the names contain spaces, so values are taken from
// the right. The header line is skipped where present: a single row given
// alone (as a test or a paste would) parses as well.
func parseLimits(r io.Reader) (Limits, error) {
	out := Limits{}
	sc := bufio.NewScanner(r)
	for i := 1; sc.Scan(); i++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || (i == 1 && strings.HasPrefix(line, "Limit ")) {
			continue
		}
		name, l, err := parseLimitLine(line)
		if err != nil {
			return nil, fmt.Errorf("limits line %d: %w", i, err)
		}
		out[name] = l
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// parseLimitLine reads one row: "Max open files  1024  4096  files".
func parseLimitLine(line string) (string, Limit, error) {
	f := strings.Fields(line)
	if len(f) < 4 {
		return "", Limit{}, fmt.Errorf("%q", line)
	}
	// "Max nice priority 0 0" has no units column.
	units, vals, nameEnd := "", f[len(f)-2:], len(f)-2
	if _, err := parseLimitValue(f[len(f)-1]); err != nil {
		units, vals, nameEnd = f[len(f)-1], f[len(f)-3:len(f)-1], len(f)-3
	}
	soft, err1 := parseLimitValue(vals[0])
	hard, err2 := parseLimitValue(vals[1])
	if err1 != nil || err2 != nil || nameEnd < 1 {
		return "", Limit{}, fmt.Errorf("bad values in %q", line)
	}
	return strings.Join(f[:nameEnd], " "), Limit{Soft: soft, Hard: hard, Units: units}, nil
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
