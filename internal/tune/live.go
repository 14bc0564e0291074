package tune

// Live values: /proc/sys files take the value ("10\n"); sysfs choice files
// take one word and read back as "always [madvise] never". In a tree (tests,
// a --root directory) the files are ordinary: writing a choice there
// rewrites the brackets the way the kernel would show them, and restoring
// writes back the exact previous bytes.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

const (
	procMagic  = 0x9fa0     // PROC_SUPER_MAGIC
	sysfsMagic = 0x62656572 // SYSFS_MAGIC
)

// onKernelFS reports whether path lives on procfs or sysfs.
func onKernelFS(path string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false
	}
	return st.Type == procMagic || st.Type == sysfsMagic
}

// readChoice returns the [selected] word of a sysfs choice file.
func readChoice(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := string(b)
	i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	if i < 0 || j < i {
		return "", fmt.Errorf("%s: no [selected] value in %q", path, strings.TrimSpace(s))
	}
	return s[i+1 : j], nil
}

// writeChoice selects word in a sysfs choice file.
func writeChoice(path, word string) error {
	if onKernelFS(path) {
		return writeKernel(path, word)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var out []string
	found := false
	for _, w := range strings.Fields(string(b)) {
		w = strings.Trim(w, "[]")
		if w == word {
			w, found = "["+w+"]", true
		}
		out = append(out, w)
	}
	if !found {
		return fmt.Errorf("%s: %q is not one of %q", path, word, strings.TrimSpace(string(b)))
	}
	return os.WriteFile(path, []byte(strings.Join(out, " ")+"\n"), 0o644)
}

// writeKernel writes a value the way `echo v > file` does, without
// truncating or creating (kernel files refuse both).
func writeKernel(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(value + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// writeSysctl sets a /proc/sys value.
func writeSysctl(path, value string) error {
	if onKernelFS(path) {
		return writeKernel(path, value)
	}
	if _, err := os.Stat(path); err != nil {
		return err // never create a kernel parameter that is not there
	}
	return os.WriteFile(path, []byte(value+"\n"), 0o644)
}

// restoreLive puts a live value back: the selected word on a kernel file
// system, the exact previous bytes in a tree.
func restoreLive(path string, rec LiveRecord) error {
	if onKernelFS(path) {
		return writeKernel(path, rec.PreviousValue)
	}
	return os.WriteFile(path, rec.PreviousRaw, 0o644)
}

// livePath maps "/proc/…" and "/sys/…" onto the injected roots.
func (o *Options) livePath(shown string) string {
	if rel, ok := strings.CutPrefix(shown, "/proc/"); ok {
		return filepath.Join(o.ProcRoot, rel)
	}
	if rel, ok := strings.CutPrefix(shown, "/sys/"); ok {
		return filepath.Join(o.SysRoot, rel)
	}
	return o.path(shown)
}
