package doctor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/gpu"
)

// tree writes files ("proc/sys/vm/swappiness": "60\n") under a fresh
// directory and returns a Host rooted there.
func tree(t *testing.T, files map[string]string) *Host {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &Host{ProcRoot: filepath.Join(dir, "proc"), SysRoot: filepath.Join(dir, "sys"), Root: filepath.Join(dir, "root"), GPU: gpu.NewNoop(), Getenv: envOf(nil)}
}

const limitsHeader = "Limit                     Soft Limit           Hard Limit           Units     \n"

func limitsFile(nproc, nofile, memlock string) string {
	return limitsHeader +
		"Max processes             " + nproc + "                 " + nproc + "               processes \n" +
		"Max open files            " + nofile + "                 " + nofile + "                 files     \n" +
		"Max locked memory         " + memlock + "                " + memlock + "                bytes     \n" +
		"Max nice priority         0                    0                    \n"
}

func TestChecks(t *testing.T) {
	swap0 := "MemTotal: 16384000 kB\nMemFree: 8000000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n"
	swap4 := "MemTotal: 16384000 kB\nMemFree: 8000000 kB\nSwapTotal: 4194304 kB\nSwapFree: 1000000 kB\n"
	big := "MemTotal: 268435456 kB\nMemFree: 8000000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n"
	tests := []struct {
		name  string
		check func(*Host) []Finding
		files map[string]string
		env   map[string]string
		id    string
		want  Severity
	}{
		{"swappiness 60 with swap", checkSwappiness, map[string]string{"proc/sys/vm/swappiness": "60\n", "proc/meminfo": swap4}, nil, "vm.swappiness", Warn},
		{"swappiness 60 without swap", checkSwappiness, map[string]string{"proc/sys/vm/swappiness": "60\n", "proc/meminfo": swap0}, nil, "vm.swappiness", Info},
		{"swappiness 10", checkSwappiness, map[string]string{"proc/sys/vm/swappiness": "10\n"}, nil, "vm.swappiness", OK},
		{"swappiness missing", checkSwappiness, nil, nil, "vm.swappiness", Info},
		{"thp always", checkTHP, map[string]string{"sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never\n", "sys/kernel/mm/transparent_hugepage/defrag": "always defer defer+madvise [madvise] never\n"}, nil, "thp.enabled", Warn},
		{"thp never", checkTHP, map[string]string{"sys/kernel/mm/transparent_hugepage/enabled": "always madvise [never]\n", "sys/kernel/mm/transparent_hugepage/defrag": "[always] madvise never\n"}, nil, "thp.enabled", Info},
		{"thp defrag always", checkTHP, map[string]string{"sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never\n", "sys/kernel/mm/transparent_hugepage/defrag": "[always] madvise never\n"}, nil, "thp.defrag", Warn},
		{"overcommit 2", checkOvercommit, map[string]string{"proc/sys/vm/overcommit_memory": "2\n", "proc/sys/vm/overcommit_ratio": "50\n"}, nil, "vm.overcommit_memory", Fail},
		{"overcommit 1", checkOvercommit, map[string]string{"proc/sys/vm/overcommit_memory": "1\n"}, nil, "vm.overcommit_memory", OK},
		{"min_free small on big host", checkMinFree, map[string]string{"proc/sys/vm/min_free_kbytes": "11264\n", "proc/meminfo": big}, nil, "vm.min_free_kbytes", Warn},
		{"min_free small on small host", checkMinFree, map[string]string{"proc/sys/vm/min_free_kbytes": "11264\n", "proc/meminfo": swap0}, nil, "vm.min_free_kbytes", OK},
		{"swap mostly used", checkSwap, map[string]string{"proc/meminfo": swap4}, nil, "swap", Warn},
		{"no swap", checkSwap, map[string]string{"proc/meminfo": swap0}, nil, "swap", Info},
		{"psi present", checkPSI, map[string]string{"proc/pressure/memory": "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"}, nil, "psi", OK},
		{"psi off on rhel8", checkPSI, map[string]string{"proc/sys/kernel/osrelease": "4.18.0-513.el8.x86_64\n", "proc/cmdline": "ro quiet\n"}, nil, "psi", Info},
		{"oom kills", checkOOMHistory, map[string]string{"proc/vmstat": "pgfault 5\noom_kill 2\n"}, nil, "oom.history", Warn},
		{"no oom kills", checkOOMHistory, map[string]string{"proc/vmstat": "oom_kill 0\n"}, nil, "oom.history", OK},
		{"nproc 4096", checkNproc, map[string]string{"proc/self/limits": limitsFile("4096", "65536", "unlimited")}, nil, "ulimit.nproc", Warn},
		{"nproc 1024", checkNproc, map[string]string{"proc/self/limits": limitsFile("1024", "65536", "unlimited")}, nil, "ulimit.nproc", Fail},
		{"nproc unlimited", checkNproc, map[string]string{"proc/self/limits": limitsFile("unlimited", "65536", "unlimited")}, nil, "ulimit.nproc", OK},
		{"nofile 1024", checkNofile, map[string]string{"proc/self/limits": limitsFile("65536", "1024", "unlimited")}, nil, "ulimit.nofile", Fail},
		{"nofile 2048", checkNofile, map[string]string{"proc/self/limits": limitsFile("65536", "2048", "unlimited")}, nil, "ulimit.nofile", Warn},
		{"memlock limited, no GPU", checkMemlock, map[string]string{"proc/self/limits": limitsFile("65536", "65536", "65536")}, nil, "ulimit.memlock", Info},
		{"memlock limited, InfiniBand", checkMemlock, map[string]string{"proc/self/limits": limitsFile("65536", "65536", "65536"), "sys/class/infiniband/mlx5_0/node_type": "1: CA\n"}, nil, "ulimit.memlock", Warn},
		{"shm 64M (docker)", checkShm, map[string]string{"proc/self/mountinfo": "1 0 0:1 / /dev/shm rw - tmpfs shm rw,size=65536k\n", "proc/meminfo": swap0}, nil, "dev.shm", Fail},
		{"shm 2G", checkShm, map[string]string{"proc/self/mountinfo": "1 0 0:1 / /dev/shm rw - tmpfs shm rw,size=2g\n", "proc/meminfo": big}, nil, "dev.shm", Warn},
		{"shm default", checkShm, map[string]string{"proc/self/mountinfo": "1 0 0:1 / /dev/shm rw - tmpfs tmpfs rw\n", "proc/meminfo": big}, nil, "dev.shm", OK},
		{"shm missing", checkShm, map[string]string{"proc/self/mountinfo": "1 0 0:1 / / rw - xfs /dev/sda rw\n"}, nil, "dev.shm", Fail},
		{"pid_max 32768", checkPidMax, map[string]string{"proc/sys/kernel/pid_max": "32768\n", "proc/sys/kernel/threads-max": "100000\n"}, nil, "kernel.pid_max", Warn},
		{"pid_max 4M", checkPidMax, map[string]string{"proc/sys/kernel/pid_max": "4194304\n", "proc/sys/kernel/threads-max": "100000\n"}, nil, "kernel.pid_max", OK},
		{"alloc conf good", checkAllocConf, nil, map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True,roundup_power2_divisions:[256:1,512:2,>:4]"}, "pytorch.alloc_conf", OK},
		{"alloc conf unknown", checkAllocConf, nil, map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "expandable_segment:True"}, "pytorch.alloc_conf", Fail},
		{"alloc conf bad bool", checkAllocConf, nil, map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:yes"}, "pytorch.alloc_conf", Fail},
		{"alloc conf gc threshold", checkAllocConf, nil, map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "garbage_collection_threshold:1.5"}, "pytorch.alloc_conf", Fail},
		{"alloc conf split with expandable", checkAllocConf, nil, map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128,expandable_segments:True"}, "pytorch.alloc_conf", Warn},
		{"alloc conf split alone", checkAllocConf, nil, map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128,expandable_segments:False"}, "pytorch.alloc_conf", OK},
		{"alloc conf async conflict", checkAllocConf, nil, map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync,max_split_size_mb:256"}, "pytorch.alloc_conf", Warn},
		{"alloc conf gc without fraction", checkAllocConf, nil, map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "garbage_collection_threshold:0.6,max_split_size_mb:128"}, "pytorch.alloc_conf.gc_idle", Info},
		{"alloc conf gc with fraction", checkAllocConf, nil, map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "garbage_collection_threshold:0.6,per_process_memory_fraction:0.8"}, "pytorch.alloc_conf", OK},
		{"alloc conf gc expandable", checkAllocConf, nil, map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "garbage_collection_threshold:0.6,expandable_segments:True"}, "pytorch.alloc_conf.gc_idle", Info},
		{"alloc conf both differ", checkAllocConf, nil, map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "PYTORCH_ALLOC_CONF": "max_split_size_mb:256"}, "pytorch.alloc_conf.both", Warn},
		{"module loading eager", checkModuleLoading, nil, map[string]string{"CUDA_MODULE_LOADING": "EAGER"}, "pytorch.cuda_module_loading", Info},
		{"module loading bogus", checkModuleLoading, nil, map[string]string{"CUDA_MODULE_LOADING": "lazy"}, "pytorch.cuda_module_loading", Warn},
		{"cgroup v2 delegated", checkDelegation, map[string]string{"proc/self/mountinfo": "35 24 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/cgroup.subtree_control": "cpu memory pids\n"}, nil, "cgroup.delegation", OK},
		{"cgroup v2 not delegated", checkDelegation, map[string]string{"proc/self/mountinfo": "35 24 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/cgroup.subtree_control": "pids\n"}, nil, "cgroup.delegation", Info},
		{"cgroup v2 limit", checkCgroupLimit, map[string]string{"proc/self/mountinfo": "35 24 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "proc/self/cgroup": "0::/job\n", "sys/fs/cgroup/job/memory.max": "1073741824\n", "sys/fs/cgroup/job/memory.current": "4096\n", "sys/fs/cgroup/job/memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"}, nil, "cgroup.limit", Info},
		{"v2 without memory controller", checkAccounting, map[string]string{"proc/self/mountinfo": "35 24 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "sys/fs/cgroup/cgroup.controllers": "cpu io pids\n"}, nil, "cgroup.accounting", Warn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tree(t, tt.files)
			h.UID = 1000
			h.Getenv = envOf(tt.env)
			fs := tt.check(h)
			for _, f := range fs {
				if f.ID != tt.id {
					continue
				}
				if f.Severity != tt.want {
					t.Errorf("%s: severity %s, want %s (%s)", f.ID, f.Severity, tt.want, f.Title)
				}
				if f.Severity >= Warn && (f.Why == "" || f.Fix == "") {
					t.Errorf("%s: a warning without why/fix", f.ID)
				}
				return
			}
			t.Fatalf("no finding %s in %+v", tt.id, fs)
		})
	}
}

func TestGPUChecks(t *testing.T) {
	off := false
	used := int64(3 << 30)
	f := gpu.NewFake(gpu.Info{DriverVersion: "535.1", CUDADriverVersion: "12.2"},
		[]gpu.Device{{Index: 0, Name: "A100", PersistenceMode: &off, ComputeMode: "Exclusive_Process", NUMANode: 1}},
		[]gpu.Process{{PID: 4242, HostPID: 4242, UsedBytes: &used}, {PID: 7, HostPID: 7, UsedBytes: &used}})
	h := tree(t, map[string]string{"proc/7/status": "Name:\tpython\nUid:\t1001\t1001\t1001\t1001\n"})
	h.GPU, h.UID = f, 1000
	h.Run = pythonSays(`{"python": "3.10.12", "numpy": "1.26.4", "torch": "2.4.0+cu124", "torch_cuda": "12.4"}`)
	got := map[string]Severity{}
	for _, c := range []func(*Host) []Finding{checkGPUModes, checkGPUProcesses, checkCUDACompat, checkGPUSource} {
		for _, f := range c(h) {
			got[f.ID] = f.Severity
		}
	}
	want := map[string]Severity{"gpu.persistence_mode": Warn, "gpu.compute_mode": Warn, "gpu.orphan_memory": Warn,
		"gpu.other_users": Info, "gpu.cuda_compat": Warn, "gpu.nvml": OK}
	for id, sev := range want {
		if got[id] != sev {
			t.Errorf("%s = %s, want %s (all: %v)", id, got[id], sev, got)
		}
	}
	h.Run = pythonSays(`{"python": "3.10.12", "numpy": "1.26.4", "torch": "2.4.0+cu124", "torch_cuda": "12.4"}`)
	f.InfoV.CUDADriverVersion = "11.8"
	h.cache = nil
	if fs := checkCUDACompat(h); len(fs) != 1 || fs[0].Severity != Fail {
		t.Errorf("driver CUDA 11.8 vs torch 12.4: %+v", fs)
	}
}

// A device on the PCI bus with no backend working is a warning, not "no GPU".
func TestGPUOnPCIWithoutDriver(t *testing.T) {
	h := tree(t, map[string]string{"sys/bus/pci/devices/0000:00:06.0/vendor": "0x10de\n", "sys/bus/pci/devices/0000:00:06.0/class": "0x030200\n"})
	h.GPUNotice = "NVIDIA GPU on PCI but no driver access: dlopen: x; nvidia-smi not found on PATH"
	if fs := checkGPUSource(h); len(fs) != 1 || fs[0].Severity != Warn || fs[0].Fix == "" {
		t.Errorf("GPU on PCI, no driver: %+v", fs)
	}
	h = tree(t, nil)
	if fs := checkGPUSource(h); len(fs) != 1 || fs[0].Severity != Info || fs[0].Title != "no NVIDIA GPU" {
		t.Errorf("no GPU: %+v", fs)
	}
}

func TestNumpyTorchPair(t *testing.T) {
	h := tree(t, nil)
	h.Run = pythonSays(`{"python": "3.11", "numpy": "2.0.1", "torch": "2.1.2", "torch_cuda": "12.1"}`)
	if fs := checkPythonEnv(h); fs[0].Severity != Fail || !strings.Contains(fs[0].Title, "NumPy 1.x") {
		t.Errorf("%+v", fs)
	}
	h = tree(t, nil)
	h.Run = func(_ context.Context, name string, args ...string) ([]byte, error) {
		return nil, errors.New("exec: \"python3\": executable file not found in $PATH")
	}
	if fs := checkPythonEnv(h); fs[0].Severity != Info || checkCUDACompat(h) != nil {
		t.Errorf("no python: %+v", fs)
	}
	// The same failure for an interpreter the user named is a warning.
	h.cache, h.Python, h.PythonGiven = nil, "/venv/bin/pyhton", true
	if fs := checkPythonEnv(h); fs[0].Severity != Warn || fs[0].Why == "" {
		t.Errorf("--python that does not run: %+v", fs)
	}
}

func TestParsers(t *testing.T) {
	// The limits parser and its tests live in internal/procfs (limits.go).
	for in, want := range map[string]string{"2.11.0+cu130": "2.11.0", "1.13.0a0": "1.13.0", "2.1.0rc1": "2.1.0", "13.0": "13.0", "": ""} {
		if got := joinVersion(version(in)); got != want {
			t.Errorf("version(%q) = %q", in, got)
		}
	}
	// PYTORCH_CUDA_ALLOC_CONF is split and tested in internal/allocconf.
	// /dev/shm's size options are read and tested in internal/shm (mount.go).
}

func readTestdata(t *testing.T, rel string) string {
	b, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGCIdleOnlyWithoutFraction: a variable that sets the fraction too
// gets no note about garbage_collection_threshold; one that does not, one
// that names the variable and both fixes.
func TestGCIdleOnlyWithoutFraction(t *testing.T) {
	for conf, want := range map[string]bool{
		"garbage_collection_threshold:0.6,per_process_memory_fraction:0.8": false,
		"max_split_size_mb:128":                                  false,
		"garbage_collection_threshold:0.6,max_split_size_mb:128": true,
	} {
		h := tree(t, nil)
		h.Getenv = envOf(map[string]string{"PYTORCH_CUDA_ALLOC_CONF": conf})
		got := false
		for _, f := range checkAllocConf(h) {
			if f.ID == "pytorch.alloc_conf.gc_idle" {
				got = true
				if !strings.Contains(f.Fix, "per_process_memory_fraction:0.9 in PYTORCH_CUDA_ALLOC_CONF") ||
					!strings.Contains(f.Fix, "set_per_process_memory_fraction") {
					t.Errorf("%s: fix %q", conf, f.Fix)
				}
			}
		}
		if got != want {
			t.Errorf("%s: gc_idle finding %v, want %v", conf, got, want)
		}
	}
}
