package doctor

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ncclLeak is a range of NCCL releases with a known memory leak.
type ncclLeak struct {
	from, before []int  // from <= version < before
	what, ref    string // what: the message id saying what leaks
}

// ncclLeaks are the NCCL releases known to leak memory in training jobs,
// with where that is reported.
var ncclLeaks = []ncclLeak{
	{[]int{2, 9, 6}, []int{2, 9, 7}, "nccl.leak.2_9_6", "torchmem issue 20"},
	{[]int{2, 16}, []int{2, 17, 1}, "nccl.leak.2_16", "github.com/NVIDIA/nccl/pull/791 (fixed in 2.17.1)"},
	{[]int{2, 27, 3}, []int{2, 28}, "nccl.leak.2_27", "github.com/NVIDIA/nccl/issues/1944"},
}

// ncclSetting is an NCCL_* variable that costs GPU or host memory when
// raised (or, for a switch, when set to the costly value).
type ncclSetting struct {
	name   string
	costly func(v string) bool
	why    string // message id
}

var ncclSettings = []ncclSetting{
	{"NCCL_BUFFSIZE", above(4 << 20), "nccl.env.buffsize.why"},
	{"NCCL_MIN_NCHANNELS", above(16), "nccl.env.channels.why"},
	{"NCCL_MAX_NCHANNELS", above(32), "nccl.env.channels.why"},
	{"NCCL_NCHANNELS_PER_NET_PEER", above(2), "nccl.env.net_peer.why"},
	{"NCCL_NVLS_ENABLE", equals("1"), "nccl.env.nvls.why"},
	{"NCCL_RUNTIME_CONNECT", equals("0"), "nccl.env.runtime_connect.why"},
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
		f := newFinding("pytorch.nccl", "pytorch", OK, "nccl.title_cpu", p.Torch).evMsg(src, "versions.cpu_build")
		return withLibs(f, sys, p.NCCLLib)
	}
	if p.NCCL == "" {
		f := newFinding("pytorch.nccl", "pytorch", Info, "nccl.title_unknown", p.Torch).evMsg(src, "ev.not_reported")
		return withLibs(f, sys, p.NCCLLib)
	}
	f := newFinding("pytorch.nccl", "pytorch", OK, "nccl.title", p.NCCL).ev(src, p.NCCL)
	f = withLibs(f, sys, p.NCCLLib)
	v := version(p.NCCL)
	for _, l := range ncclLeaks {
		if !versionLess(v, l.from) && versionLess(v, l.before) {
			f.Severity = Warn
			return f.titled("nccl.title_leak", p.NCCL).why("nccl.leak.why", word(l.what), l.ref).fix("nccl.leak.fix")
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
		out = append(out, newFinding("pytorch.nccl.env", "pytorch", Info, "nccl.env.title", s.name, v).
			ev(src, s.name+"="+v).why(s.why).fix("nccl.env.fix", s.name))
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
