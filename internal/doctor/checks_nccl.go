package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ncclLeak is a range of NCCL releases with a known memory leak.
type ncclLeak struct {
	from, before []int // from <= version < before
	what, ref    string
}

// ncclLeaks are the NCCL releases known to leak memory in training jobs,
// with where that is reported.
var ncclLeaks = []ncclLeak{
	{[]int{2, 9, 6}, []int{2, 9, 7}, "NCCL 2.9.6 leaks memory (reported in torchmem issue 20; fixed in later 2.9 releases)", "torchmem issue 20"},
	{[]int{2, 16}, []int{2, 17, 1}, "every communicator leaks its proxy thread's listening socket and buffers when destroyed: jobs that create process groups repeatedly (elastic restarts, new_group per phase) grow host memory", "github.com/NVIDIA/nccl/pull/791 (fixed in 2.17.1)"},
	{[]int{2, 27, 3}, []int{2, 28}, "ncclGroupEnd leaks ~160 bytes of host memory per collective on single-rank communicators (world size 1): a long run's RSS climbs steadily", "github.com/NVIDIA/nccl/issues/1944"},
}

// ncclSetting is an NCCL_* variable that costs GPU or host memory when
// raised (or, for a switch, when set to the costly value).
type ncclSetting struct {
	name   string
	costly func(v string) bool
	why    string
}

var ncclSettings = []ncclSetting{
	{"NCCL_BUFFSIZE", above(4 << 20), "NCCL_BUFFSIZE above its 4 MiB default multiplies the GPU buffers every channel keeps per peer and protocol: hundreds of MiB to GiB per GPU on a large job."},
	{"NCCL_MIN_NCHANNELS", above(16), "more channels means more buffers per peer: each channel keeps its own NCCL_BUFFSIZE buffers."},
	{"NCCL_MAX_NCHANNELS", above(32), "more channels means more buffers per peer: each channel keeps its own NCCL_BUFFSIZE buffers."},
	{"NCCL_NCHANNELS_PER_NET_PEER", above(2), "more channels per network peer means more buffers per peer."},
	{"NCCL_NVLS_ENABLE", equals("1"), "NVLink SHARP (NVLS) keeps extra multicast buffers on every GPU of an NVSwitch system; NCCL_NVLS_ENABLE=0 frees them at some all-reduce speed."},
	{"NCCL_RUNTIME_CONNECT", equals("0"), "NCCL_RUNTIME_CONNECT=0 (NCCL 2.22+) connects every algorithm's buffers at communicator creation instead of on first use, so GPU memory goes to paths the job never takes."},
}

func above(n int64) func(string) bool {
	return func(v string) bool {
		x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return err == nil && x > n
	}
}

func equals(want string) func(string) bool {
	return func(v string) bool { return strings.TrimSpace(v) == want }
}

// checkNCCL reports the NCCL torch loads against known leaking releases,
// the system's libnccl, and NCCL_* settings that cost memory (from the
// environment and /etc/nccl.conf).
func checkNCCL(h *Host) []Finding {
	p := h.python()
	var out []Finding
	if p.err == "" && p.Torch != "" {
		out = append(out, ncclVersionFinding(h, p))
	}
	return append(out, ncclSettingFindings(h)...)
}

func ncclVersionFinding(h *Host, p pyProbe) Finding {
	src := h.pythonName() + " -c 'import torch; torch.cuda.nccl.version()'"
	sys := systemNCCL(h.Root)
	if p.TorchCUDA == "" {
		f := newFinding("pytorch.nccl", "pytorch", OK, "torch "+p.Torch+" is a CPU build: no NCCL").ev(src, "CPU build")
		return withLibs(f, sys, p.NCCLLib)
	}
	if p.NCCL == "" {
		f := newFinding("pytorch.nccl", "pytorch", Info, "NCCL version of torch "+p.Torch+" not reported").ev(src, "not reported")
		return withLibs(f, sys, p.NCCLLib)
	}
	f := newFinding("pytorch.nccl", "pytorch", OK, "torch uses NCCL "+p.NCCL).ev(src, p.NCCL)
	f = withLibs(f, sys, p.NCCLLib)
	v := version(p.NCCL)
	for _, l := range ncclLeaks {
		if !versionLess(v, l.from) && versionLess(v, l.before) {
			f.Severity, f.Title = Warn, "NCCL "+p.NCCL+" has a known memory leak"
			return f.why(l.what + " (" + l.ref + ").").
				fix("Upgrade torch (its wheel bundles NCCL), or install a fixed NCCL into the job's environment: pip install -U nvidia-nccl-cu12 (torch loads the wheel's libnccl), or LD_PRELOAD a fixed libnccl.so.2.")
		}
	}
	return f
}

// withLibs adds the NCCL libraries found as evidence.
func withLibs(f Finding, sys []string, wheel string) Finding {
	if wheel != "" {
		f = f.ev("pip wheel nvidia-nccl", wheel)
	}
	if len(sys) > 0 {
		f = f.ev("system libnccl", strings.Join(sys, ", "))
	}
	return f
}

// ncclLibDirs are where distributions and CUDA installs put libnccl.
var ncclLibDirs = []string{"usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib64", "usr/lib",
	"usr/local/cuda/lib64", "usr/local/nccl/lib", "opt/nccl/lib"}

// systemNCCL lists the versioned libnccl.so.X.Y.Z files under root, shown
// as absolute paths of the host; the version is in the name.
func systemNCCL(root string) []string {
	var out []string
	for _, d := range ncclLibDirs {
		m, _ := filepath.Glob(filepath.Join(root, d, "libnccl.so.*.*"))
		for _, p := range m {
			if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
				out = append(out, "/"+d+"/"+filepath.Base(p))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ncclSettingFindings: one finding per costly NCCL_* setting, from the
// environment torchmem runs in (the jobs may have another) and from
// /etc/nccl.conf, which NCCL reads in every process.
func ncclSettingFindings(h *Host) []Finding {
	conf, confSrc, _ := h.rootFile("etc/nccl.conf")
	confVals := parseNCCLConf(conf)
	var out []Finding
	for _, s := range ncclSettings {
		v, src := h.getenv(s.name), "environment"
		if v == "" {
			v, src = confVals[s.name], confSrc
		}
		if v == "" || !s.costly(v) {
			continue
		}
		out = append(out, newFinding("pytorch.nccl.env", "pytorch", Info, fmt.Sprintf("%s=%s costs memory", s.name, v)).
			ev(src, s.name+"="+v).why(s.why).
			fix("Unset "+s.name+" (or lower it) unless a measured speed-up needs it; torchmem run shows the GPU memory per process it costs."))
	}
	return out
}

// parseNCCLConf reads NCCL's KEY=VALUE config file (# comments).
func parseNCCLConf(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}
