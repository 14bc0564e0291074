package procfs

// /proc/<pid>/smaps_rollup (kernel >= 4.14), or the sum over the mappings
// of /proc/<pid>/smaps where the rollup is missing (CentOS 7):
//
//	00400000-7ffc59a41000 ---p 00000000 00:00 0      [rollup]
//	Rss:             1515412 kB
//	Pss:             1513394 kB
//	Shared_Clean:       2456 kB
//	Private_Clean:    541588 kB
//	Private_Dirty:    971368 kB
//	Swap:                  0 kB
//	SwapPss:               0 kB
//
// Reading either file makes the kernel walk every page table of the process
// (~2.5 ms for a torch process): call it on the slow tier only. Hand-parsed
// rather than through prometheus/procfs so that the tier costs no more than
// the kernel's walk (one pooled buffer, no per-line allocation) and says
// which file its numbers came from.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

// SmapsRollup is a process's proportional memory, in bytes.
type SmapsRollup struct {
	RssBytes uint64 `json:"rss_bytes"`
	PssBytes uint64 `json:"pss_bytes"`
	// USSBytes is the unique set: private clean + private dirty pages.
	USSBytes          uint64 `json:"uss_bytes"`
	SharedCleanBytes  uint64 `json:"shared_clean_bytes"`
	SharedDirtyBytes  uint64 `json:"shared_dirty_bytes"`
	PrivateCleanBytes uint64 `json:"private_clean_bytes"`
	PrivateDirtyBytes uint64 `json:"private_dirty_bytes"`
	AnonymousBytes    uint64 `json:"anonymous_bytes"`
	SwapBytes         uint64 `json:"swap_bytes"`
	SwapPssBytes      uint64 `json:"swap_pss_bytes"`
	// Source is "smaps_rollup" or "smaps" (summed, kernels before 4.14).
	Source string `json:"source"`
}

// SmapsRollup reads <root>/<pid>/smaps_rollup, or sums <root>/<pid>/smaps
// on kernels without it.
func (f FS) SmapsRollup(pid int) (SmapsRollup, error) {
	path := f.pidPath(pid, "smaps_rollup")
	var r SmapsRollup
	err := withFile(path, func(b []byte) error {
		if err := r.addLines(b); err != nil {
			return fmt.Errorf("parse %s: %w", path, err)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return f.SmapsSum(pid)
	}
	r.Source = "smaps_rollup"
	r.USSBytes = r.PrivateCleanBytes + r.PrivateDirtyBytes
	return r, err
}

// SmapsSum streams /proc/<pid>/smaps (one record per mapping, so it comes
// in many reads) and sums the mappings: what kernels before 4.14 need, and
// what smem does. Each mapping's figures are truncated to whole kB by the
// kernel, so for a torch process with ~1,800 mappings the sums come out
// up to a few hundred kB below smaps_rollup's, which rounds once.
func (f FS) SmapsSum(pid int) (SmapsRollup, error) {
	path := f.pidPath(pid, "smaps")
	fh, err := os.Open(path)
	if err != nil {
		return SmapsRollup{}, fmt.Errorf("read %s: %w", path, err)
	}
	defer fh.Close()
	r := SmapsRollup{Source: "smaps"}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if err := r.addLine(sc.Bytes()); err != nil {
			return SmapsRollup{}, fmt.Errorf("parse %s: %w", path, err)
		}
	}
	if err := sc.Err(); err != nil {
		return SmapsRollup{}, fmt.Errorf("read %s: %w", path, err)
	}
	r.USSBytes = r.PrivateCleanBytes + r.PrivateDirtyBytes
	return r, nil
}

func (r *SmapsRollup) addLines(b []byte) error {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if err := r.addLine(line); err != nil {
			return err
		}
	}
	return nil
}

// addLine adds one "Key:   N kB" line; mapping headers, VmFlags and
// other non-size lines are skipped.
func (r *SmapsRollup) addLine(line []byte) error {
	k, v, ok := bytes.Cut(line, []byte(":"))
	if !ok || !bytes.HasSuffix(v, []byte(" kB")) {
		return nil
	}
	var dst *uint64
	switch string(k) {
	case "Rss":
		dst = &r.RssBytes
	case "Pss":
		dst = &r.PssBytes
	case "Shared_Clean":
		dst = &r.SharedCleanBytes
	case "Shared_Dirty":
		dst = &r.SharedDirtyBytes
	case "Private_Clean":
		dst = &r.PrivateCleanBytes
	case "Private_Dirty":
		dst = &r.PrivateDirtyBytes
	case "Anonymous":
		dst = &r.AnonymousBytes
	case "Swap":
		dst = &r.SwapBytes
	case "SwapPss":
		dst = &r.SwapPssBytes
	default:
		return nil
	}
	n, err := strconv.ParseUint(string(bytes.TrimSpace(v[:len(v)-3])), 10, 64)
	if err != nil || n > 1<<50 {
		return fmt.Errorf("field %s: bad size %q", k, bytes.TrimSpace(v))
	}
	*dst += n * 1024
	return nil
}
