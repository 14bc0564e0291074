package procfs

// /sys/kernel/mm/transparent_hugepage/{enabled,defrag}: the selected value
// is the bracketed word:
//
//	always [madvise] never
//	always defer defer+madvise [madvise] never

import (
	"fmt"
	"path/filepath"
	"strings"
)

// THP is the transparent hugepage setting ("always", "madvise", "never",
// and for defrag also "defer", "defer+madvise"). ShmemEnabled is empty
// where the kernel lacks the file.
type THP struct {
	Enabled      string `json:"enabled"`
	Defrag       string `json:"defrag"`
	ShmemEnabled string `json:"shmem_enabled,omitempty"`
}

// ReadTHP reads the THP settings under sysRoot (normally "/sys"). It returns
// ErrNotPresent when the kernel has no THP.
func ReadTHP(sysRoot string) (THP, error) {
	dir := filepath.Join(sysRoot, "kernel", "mm", "transparent_hugepage")
	var t THP
	for _, item := range []struct {
		file string
		dst  *string
		must bool
	}{{"enabled", &t.Enabled, true}, {"defrag", &t.Defrag, true}, {"shmem_enabled", &t.ShmemEnabled, false}} {
		path := filepath.Join(dir, item.file)
		b, err := readSmall(path)
		if err != nil {
			if !item.must && IsVanished(err) {
				continue
			}
			if IsVanished(err) {
				return THP{}, fmt.Errorf("%s: %w", path, ErrNotPresent)
			}
			return THP{}, err
		}
		v, err := parseBracketed(string(b))
		if err != nil {
			return THP{}, fmt.Errorf("parse %s: %w", path, err)
		}
		*item.dst = v
	}
	return t, nil
}

// parseBracketed returns the word in [brackets] of a sysfs choice file.
// The kernel's words never hold a bracket, so one inside ("[0[]") means
// the file is not a choice file and is refused rather than half-parsed.
func parseBracketed(s string) (string, error) {
	i := strings.IndexByte(s, '[')
	if i < 0 {
		return "", fmt.Errorf("no [selected] value in %q", strings.TrimSpace(s))
	}
	j := strings.IndexByte(s[i:], ']')
	if j < 0 {
		return "", fmt.Errorf("unclosed [ in %q", strings.TrimSpace(s))
	}
	v := s[i+1 : i+j]
	if strings.IndexByte(v, '[') >= 0 {
		return "", fmt.Errorf("nested [ in %q", strings.TrimSpace(s))
	}
	return v, nil
}
