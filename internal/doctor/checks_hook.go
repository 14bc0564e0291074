package doctor

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
	f := newFinding("pytorch.hook", "pytorch", OK, "hook.title", exe, p.Python, p.Torch).
		ev(src, exe+", Python "+p.Python).ev("torch.__version__", p.Torch)
	if p.SiteCustomize != "" {
		f = f.ev("importlib.util.find_spec('sitecustomize')", p.SiteCustomize+" (the hook runs it first)")
	}
	switch {
	case versionLess(version(p.Python), hookMinPython):
		f.Severity = Warn
		return []Finding{f.titled("hook.title_old_python", p.Python).why("hook.old_python.why").fix("hook.old_python.fix")}
	case versionLess(version(p.Torch), hookMinTorch):
		f.Severity = Warn
		return []Finding{f.titled("hook.title_old_torch", p.Torch).why("hook.old_torch.why").fix("hook.old_torch.fix")}
	}
	return []Finding{f}
}
