package doctor

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/procfs"
)

// Host is everything the checks read, injected: roots of /proc, /sys and
// the file system (for /etc and /dev/shm), the GPU backend, the command
// runner for the Python probe, and the environment.
type Host struct {
	ProcRoot, SysRoot, Root string
	GPU                     gpu.Backend // nil: no GPU backend (as gpu.NewNoop)
	GPUNotice               string      // gpu.Open's notice
	Run                     gpu.Runner  // runs the Python probe; nil: skip it
	Python                  string      // interpreter that will run the jobs
	PythonGiven             bool        // Python was named by the user (--python), not the default
	Getenv                  func(string) string
	UID                     int

	cache map[string]any
}

// HostFacts identifies the host a report is about.
type HostFacts struct {
	Hostname string `json:"hostname,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	OS       string `json:"os,omitempty"`
}

func (h *Host) facts() HostFacts {
	var f HostFacts
	f.Hostname, _, _ = h.procFile("sys/kernel/hostname")
	f.Kernel, _, _ = h.procFile("sys/kernel/osrelease")
	if s, _, err := h.rootFile("etc/os-release"); err == nil {
		f.OS = osReleaseName(s)
	}
	return f
}

// osReleaseName returns PRETTY_NAME from os-release text.
func osReleaseName(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// procFile reads <ProcRoot>/rel, trimmed, and returns it with the path a
// user would look at ("/proc/rel"), which is what evidence shows.
func (h *Host) procFile(rel string) (string, string, error) {
	return readShown(h.ProcRoot, "/proc", rel)
}

func (h *Host) sysFile(rel string) (string, string, error) {
	return readShown(h.SysRoot, "/sys", rel)
}

func (h *Host) rootFile(rel string) (string, string, error) {
	return readShown(h.Root, "", rel)
}

const maxFileBytes = 4 << 20

func readShown(root, shownRoot, rel string) (string, string, error) {
	shown := shownRoot + "/" + rel
	f, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		return "", shown, err
	}
	defer f.Close()
	// A failing read keeps what it read, with no error: the checks take an
	// openable file as there.
	b, _ := io.ReadAll(io.LimitReader(f, maxFileBytes))
	return strings.TrimSpace(string(b)), shown, nil
}

// sysctl reads a /proc/sys value as an integer.
func (h *Host) sysctlInt(rel string) (int64, string, string, error) {
	s, shown, err := h.procFile("sys/" + rel)
	if err != nil {
		return 0, "", shown, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, s, shown, err
}

// memo caches a value computed once per run (meminfo, GPU lists, the probe).
func memo[T any](h *Host, key string, f func() T) T {
	if h.cache == nil {
		h.cache = map[string]any{}
	}
	if v, ok := h.cache[key]; ok {
		return v.(T)
	}
	v := f()
	h.cache[key] = v
	return v
}

type memResult struct {
	m   procfs.Meminfo
	err error
}

type fsResult struct {
	fs  procfs.FS
	err error
}

// procFS is the procfs reader of ProcRoot, for the files it parses.
func (h *Host) procFS() (procfs.FS, error) {
	r := memo(h, "procfs", func() fsResult {
		fs, err := procfs.NewFS(h.ProcRoot)
		return fsResult{fs, err}
	})
	return r.fs, r.err
}

func (h *Host) meminfo() (procfs.Meminfo, error) {
	r := memo(h, "meminfo", func() memResult {
		fs, err := h.procFS()
		if err != nil {
			return memResult{err: err}
		}
		m, err := fs.Meminfo()
		return memResult{m, err}
	})
	return r.m, r.err
}

// memTotal returns MemTotal in bytes, 0 when unknown.
func (h *Host) memTotal() uint64 {
	m, err := h.meminfo()
	if err != nil || m.MemTotalBytes == nil {
		return 0
	}
	return *m.MemTotalBytes
}

type gpuResult struct {
	devs  []gpu.Device
	procs []gpu.Process
	err   error
}

func (h *Host) gpus() gpuResult {
	return memo(h, "gpus", func() gpuResult {
		if h.GPU == nil {
			return gpuResult{}
		}
		devs, err := h.GPU.Devices()
		if err != nil {
			return gpuResult{devs: devs, err: err}
		}
		procs, err := h.GPU.Processes()
		return gpuResult{devs, procs, err}
	})
}

func (h *Host) getenv(k string) string {
	if h.Getenv == nil {
		return ""
	}
	return h.Getenv(k)
}

func dirExists(root, rel string) bool {
	st, err := os.Stat(filepath.Join(root, rel))
	return err == nil && st.IsDir()
}
