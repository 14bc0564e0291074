package cgroup

// Limit files: v2 memory.max / memory.high / memory.swap.max hold a byte
// count or "max"; v1 memory.limit_in_bytes holds 9223372036854771712
// (PAGE_COUNTER_MAX pages in bytes, rounded to the page size) when unset.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// v1Unlimited is the smallest value v1 prints for "no limit" (4 KiB pages);
// larger page sizes print larger numbers, so anything at or above is "max".
const v1Unlimited = 9223372036854771712

// Limit is a cgroup memory limit: Unlimited, or Bytes.
type Limit struct {
	Bytes     uint64
	Unlimited bool
}

// String returns "max" or the byte count.
func (l Limit) String() string {
	if l.Unlimited {
		return "max"
	}
	return strconv.FormatUint(l.Bytes, 10)
}

// MarshalJSON writes "max" or a number.
func (l Limit) MarshalJSON() ([]byte, error) {
	if l.Unlimited {
		return []byte(`"max"`), nil
	}
	return []byte(strconv.FormatUint(l.Bytes, 10)), nil
}

// UnmarshalJSON reads "max" or a number.
func (l *Limit) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := parseLimit(s)
		*l = v
		return err
	}
	var n uint64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("limit: %w", err)
	}
	*l = Limit{Bytes: n}
	return nil
}

// parseLimit reads one limit value of either version.
func parseLimit(s string) (Limit, error) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return Limit{Unlimited: true}, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		// v1 prints -1 on some old kernels for "no limit".
		if s == "-1" {
			return Limit{Unlimited: true}, nil
		}
		return Limit{}, fmt.Errorf("bad limit %q", s)
	}
	if n >= v1Unlimited {
		return Limit{Unlimited: true}, nil
	}
	return Limit{Bytes: n}, nil
}
