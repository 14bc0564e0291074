package doctor

import "fmt"

// The torchmem hook's requirements (internal/hook/python/torchmem_hook:
// its sitecustomize arms nothing under Python < 3.8).
var (
	hookMinPython = []int{3, 8}
	hookMinTorch  = []int{1, 10}
)

// checkHook says which Python the jobs run with and whether `torchmem
// run`'s in-process hook can load there.
func checkHook(h *Host) []Finding {
	p := h.python()
	if p.err != "" || p.Torch == "" {
		return nil // pytorch.versions says why
	}
	exe := orDefault(p.Executable, h.pythonName())
	src := h.pythonName() + " -c 'import sys; sys.executable, sys.version'"
	f := newFinding("pytorch.hook", "pytorch", OK, fmt.Sprintf("the torchmem hook can run under %s (Python %s, torch %s)", exe, p.Python, p.Torch)).
		ev(src, exe+", Python "+p.Python).ev("torch.__version__", p.Torch)
	if p.SiteCustomize != "" {
		f = f.ev("importlib.util.find_spec('sitecustomize')", p.SiteCustomize+" (the hook runs it first)")
	}
	switch {
	case versionLess(version(p.Python), hookMinPython):
		f.Severity, f.Title = Warn, fmt.Sprintf("the torchmem hook cannot load under Python %s (needs 3.8+)", p.Python)
		return []Finding{f.why("torchmem run still limits, samples and explains the job, but without its hook: no allocator stats, optimizer steps, CUDA OOM reports or DataLoader worker identity (so no copy-on-read or per-step findings).").
			fix("Run the jobs with Python 3.8 or later (a venv or conda environment; python38/python39 from RHEL/CentOS AppStream or SCL) and pass it: torchmem doctor --python /path/to/python.")}
	case versionLess(version(p.Torch), hookMinTorch):
		f.Severity, f.Title = Warn, fmt.Sprintf("torch %s is older than the hook supports (1.10+)", p.Torch)
		return []Finding{f.why("The hook reads allocator statistics and hooks optimizer steps through APIs of torch 1.10 and later; with older torch it may report nothing.").
			fix("Upgrade torch to 1.10 or later in the jobs' environment.")}
	}
	return []Finding{f}
}
