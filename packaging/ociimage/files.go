package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// file is one entry of the image's layer: a directory (path ends in "/"),
// a symlink (link set) or a regular file.
type file struct {
	path string // relative to /, no leading slash
	mode int64
	data []byte
	link string
}

// triplets are Debian's multiarch directories by GOARCH: where glibc's
// loader looks by default and where the NVIDIA toolkit mounts NVML.
var triplets = map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}

// imageFiles is the layer's content: the binary, the shared libraries it
// needs (from s.LibRoot), an empty library directory for NVML, /tmp, and
// root in /etc/passwd and /etc/group (user lookups without cgo read them).
func imageFiles(s Spec) ([]file, error) {
	triplet, ok := triplets[s.Arch]
	if !ok {
		return nil, fmt.Errorf("arch %s: no multiarch directory known (amd64, arm64)", s.Arch)
	}
	bin, err := os.ReadFile(s.Binary)
	if err != nil {
		return nil, fmt.Errorf("read binary: %w", err)
	}
	files := []file{
		{path: "usr/bin/torchmem", mode: 0o755, data: bin},
		{path: "usr/lib/" + triplet + "/", mode: 0o755},
		{path: "tmp/", mode: 0o1777},
		{path: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\n")},
		{path: "etc/group", mode: 0o644, data: []byte("root:x:0:\n")},
	}
	libs, err := sharedLibraries(s.Binary, s.LibRoot, triplet)
	if err != nil {
		return nil, err
	}
	files = append(files, libs...)
	return withParents(files), nil
}

// sharedLibraries returns the ELF interpreter and every DT_NEEDED library
// of bin, transitively, read from root's multiarch and lib64 directories
// and placed under /lib/<triplet> (the interpreter also at its own path, as
// a symlink). A static binary needs none.
func sharedLibraries(bin, root, triplet string) ([]file, error) {
	interp, needed, err := elfDeps(bin)
	if err != nil || interp == "" {
		return nil, err
	}
	dirs := []string{"lib/" + triplet, "usr/lib/" + triplet, "lib64", "usr/lib64"}
	var out []file
	seen := map[string]bool{}
	queue := append([]string{path.Base(interp)}, needed...)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		src, err := findLib(root, dirs, name)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		out = append(out, file{path: "lib/" + triplet + "/" + name, mode: 0o755, data: data})
		_, more, err := elfDeps(src)
		if err != nil {
			return nil, err
		}
		queue = append(queue, more...)
	}
	if inLib := "lib/" + triplet + "/" + path.Base(interp); strings.TrimPrefix(interp, "/") != inLib {
		out = append(out, file{path: strings.TrimPrefix(interp, "/"), mode: 0o777, link: "/" + inLib})
	}
	return out, nil
}

// elfDeps reads an ELF file's interpreter (PT_INTERP) and DT_NEEDED names.
func elfDeps(p string) (interp string, needed []string, err error) {
	f, err := elf.Open(p)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", p, err)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			b := make([]byte, prog.Filesz)
			if _, err := prog.ReadAt(b, 0); err != nil {
				return "", nil, fmt.Errorf("%s: interpreter: %w", p, err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	needed, err = f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return "", nil, fmt.Errorf("%s: needed libraries: %w", p, err)
	}
	return interp, needed, nil
}

func findLib(root string, dirs []string, name string) (string, error) {
	for _, d := range dirs {
		p := filepath.Join(root, d, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("shared library %s: not in %s under %s (the build host's glibc goes into the image)", name, strings.Join(dirs, ", "), root)
}

// withParents adds every missing parent directory and sorts by path, so
// the tar lists a directory before its contents.
func withParents(files []file) []file {
	have := map[string]bool{}
	for _, f := range files {
		have[f.path] = true
	}
	for _, f := range files {
		for d := path.Dir(strings.TrimSuffix(f.path, "/")); d != "." && !have[d+"/"]; d = path.Dir(d) {
			have[d+"/"] = true
			files = append(files, file{path: d + "/", mode: 0o755})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files
}
