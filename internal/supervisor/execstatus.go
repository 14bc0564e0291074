package supervisor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// How bash (5.2, execute_cmd.c and findcmd.c) finds and starts a command,
// and what it exits with when it cannot, so that `torchmem run -- CMD`
// fails exactly as `bash -c CMD` does:
//
//	not found in PATH, or a path that does not exist     127
//	a script whose #! interpreter is missing (ENOENT)    127
//	not executable, a directory, a path component that
//	is not a directory or cannot be searched            126
//	ENOEXEC: an empty file                               0 (nothing to run)
//	ENOEXEC: binary (ELF magic, or NUL in the first line
//	of the first 80 bytes)                               126
//	ENOEXEC: text without #!                             run by /bin/sh

// fileKind is what a PATH candidate is, as the search needs to know it.
type fileKind int

const (
	kindMissing fileKind = iota
	kindDir
	kindFile     // exists, not executable by us
	kindExecFile // exists, executable by us (effective ids)
)

// lookCommand is bash's search: a name with a slash is used as it is;
// otherwise the first executable file in PATH, else the first existing
// non-directory (bash runs it and reports "Permission denied", 126). An
// empty PATH entry is the current directory. ok is false for "command not
// found".
func lookCommand(name, path string, probe func(string) fileKind) (string, bool) {
	if strings.Contains(name, "/") {
		return name, true
	}
	if name == "" {
		return "", false
	}
	first := ""
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		cand := filepath.Join(dir, name)
		if dir == "." {
			cand = "./" + name
		}
		switch probe(cand) {
		case kindExecFile:
			return cand, true
		case kindFile:
			if first == "" {
				first = cand
			}
		}
	}
	return first, first != ""
}

// probeFile is the real probe: stat, then access(X_OK) with the effective
// ids, as bash's eaccess does.
func probeFile(p string) fileKind {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return kindMissing
	case fi.IsDir():
		return kindDir
	case unix.Faccessat(unix.AT_FDCWD, p, unix.X_OK, unix.AT_EACCESS) == nil:
		return kindExecFile
	}
	return kindFile
}

// execOutcome is what to do after execve(path) failed.
type execOutcome struct {
	Code   int    // exit status to return (when !Script)
	Reason string // what to print after "torchmem: PATH: "
	Script bool   // ENOEXEC text: run it with /bin/sh instead
}

// execFailed decides, from execve's errno, what the file is (kind) and its
// first bytes (sample, up to 80), bash's answer. Pure.
func execFailed(err error, kind fileKind, sample []byte) execOutcome {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return execOutcome{Code: 126, Reason: err.Error()}
	}
	switch {
	case kind == kindDir:
		return execOutcome{Code: 126, Reason: "Is a directory"}
	case errno == syscall.ENOEXEC && len(sample) == 0:
		return execOutcome{Code: 0}
	case errno == syscall.ENOEXEC && binarySample(sample):
		return execOutcome{Code: 126, Reason: "cannot execute binary file: " + errno.Error()}
	case errno == syscall.ENOEXEC:
		return execOutcome{Script: true}
	case errno == syscall.ENOENT && kind != kindMissing:
		return execOutcome{Code: 127, Reason: "cannot execute: required file not found (" + interpreterOf(sample) + ")"}
	case errno == syscall.ENOENT:
		return execOutcome{Code: 127, Reason: "No such file or directory"}
	}
	return execOutcome{Code: 126, Reason: errnoText(errno)}
}

// binarySample is bash's check_binary_file: ELF magic, or a NUL before the
// end of the first line (the first two lines after #!).
func binarySample(b []byte) bool {
	if len(b) >= 4 && string(b[:4]) == "\x7fELF" {
		return true
	}
	lines := 1
	if len(b) >= 2 && b[0] == '#' && b[1] == '!' {
		lines = 2
	}
	for _, c := range b {
		if c == '\n' {
			if lines--; lines == 0 {
				return false
			}
		}
		if c == 0 {
			return true
		}
	}
	return false
}

// interpreterOf names the #! interpreter of a script sample ("" when none).
func interpreterOf(b []byte) string {
	s, ok := strings.CutPrefix(string(b), "#!")
	if !ok {
		return "no #! line"
	}
	s, _, _ = strings.Cut(s, "\n")
	if f := strings.Fields(s); len(f) > 0 {
		return "interpreter " + f[0]
	}
	return "empty #! line"
}

// errnoText is strerror with a capital, as bash prints it.
func errnoText(e syscall.Errno) string {
	s := e.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// readSample returns the first 80 bytes of path (bash's sample buffer).
func readSample(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 80)
	n, _ := f.Read(b)
	return b[:n]
}
