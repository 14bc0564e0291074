package doctor

import (
	"strconv"
	"strings"
)

// The torchmem hook's requirements (internal/hook/python/torchmem_hook:
// its sitecustomize arms nothing under Python < 3.6, _common.MIN_PYTHON;
// 3.6 and 3.7 run degraded, _common.degraded() says how).
var (
	hookMinPython = []int{3, 6}
	hookMinTorch  = []int{1, 10}
)

// hookProbeSource is how the evidence names the import probe.
const hookProbeSource = "-c 'import torchmem_hook._agent; _common.degraded()'"

// checkHook says which Python the jobs run with (path and version) and
// whether `torchmem run`'s in-process hook loads there, from a real import
// of the hook by that interpreter (hookProbe); the version alone decides
// only when that probe could not run.
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
	hp := h.hookProbe()
	f = f.ev(h.pythonName()+" "+hookProbeSource, hookEvidence(hp))
	if hp.Loads {
		for _, d := range hp.Degraded {
			f = f.ev("torchmem_hook._common.degraded()", d)
		}
	}
	oldPython := versionLess(version(p.Python), hookMinPython)
	if hp.err == "" && hp.Error == "" {
		oldPython = !hp.Loads
	}
	switch {
	case oldPython:
		f.Severity = Warn
		return []Finding{f.titled("hook.title_old_python", p.Python).why("hook.old_python.why").fix("hook.old_python.fix")}
	case hp.Error != "":
		f.Severity = Warn
		return []Finding{f.titled("hook.title_import_error", exe).why("hook.import_error.why").fix("hook.import_error.fix")}
	case versionLess(version(p.Torch), hookMinTorch):
		f.Severity = Warn
		return []Finding{f.titled("hook.title_old_torch", p.Torch).why("hook.old_torch.why").fix("hook.old_torch.fix")}
	case len(hp.Degraded) > 0:
		f.Severity = Info
		return []Finding{f.titled("hook.title_degraded", exe, p.Python, p.Torch).why("hook.degraded.why", p.Python).fix("hook.degraded.fix")}
	}
	return []Finding{f}
}

// hookEvidence is the import probe's answer in one line.
func hookEvidence(hp hookProbe) string {
	switch {
	case hp.err != "":
		return "probe did not run: " + hp.err
	case hp.Error != "":
		return "import failed: " + hp.Error
	case !hp.Loads:
		return "imports, but the hook arms only on Python " + dotted(hp.MinPython) + "+"
	case len(hp.Degraded) > 0:
		return "loads; degraded on this Python (below)"
	}
	return "loads; nothing degraded"
}

func dotted(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ".")
}
