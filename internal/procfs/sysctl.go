package procfs

// /proc/sys/<name>: "vm.swappiness" and "vm/swappiness" both name
// /proc/sys/vm/swappiness; values come back trimmed ("60").

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Sysctl reads the kernel parameter name (dots or slashes) and returns its
// value with surrounding white space trimmed; tabs inside multi-value
// parameters are kept.
func (f FS) Sysctl(name string) (string, error) {
	rel, err := sysctlPath(name)
	if err != nil {
		return "", err
	}
	b, err := readSmall(filepath.Join(f.root, "sys", rel))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// BootID reads <root>/sys/kernel/random/boot_id: a random id the kernel
// draws at each boot, which tells a PID of this boot from one of an earlier.
func (f FS) BootID() (string, error) {
	return f.Sysctl("kernel.random.boot_id")
}

// sysctlPath turns a sysctl name into a path under /proc/sys, refusing
// names that would escape it.
func sysctlPath(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("sysctl: empty name")
	}
	rel := name
	if !strings.Contains(name, "/") {
		rel = strings.ReplaceAll(name, ".", "/")
	}
	clean := filepath.Clean("/" + rel)
	if clean == "/" || strings.Contains(rel, "..") {
		return "", fmt.Errorf("sysctl: bad name %q", name)
	}
	return clean[1:], nil
}
