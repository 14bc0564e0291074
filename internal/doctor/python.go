package doctor

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// probeScript prints the versions that matter, as JSON. It imports torch
// but never initialises CUDA (torch.version.cuda is a build constant).
const probeScript = `import json, sys
out = {"python": sys.version.split()[0], "executable": sys.executable}
try:
    import importlib.util
    spec = importlib.util.find_spec("sitecustomize")
    out["sitecustomize"] = (spec.origin or "") if spec else ""
except Exception:
    pass  # the hook chains to whatever site.py would have run
try:
    import importlib.util, glob, os
    spec = importlib.util.find_spec("nvidia.nccl")
    if spec and spec.submodule_search_locations:
        libs = glob.glob(os.path.join(list(spec.submodule_search_locations)[0], "lib", "libnccl.so*"))
        out["nccl_lib"] = sorted(libs)[-1] if libs else ""
except Exception:
    pass  # no pip NCCL wheel
try:
    import numpy
    out["numpy"] = numpy.__version__
except Exception:
    pass  # reported as "numpy absent"
try:
    import torch
    out["torch"] = torch.__version__
    out["torch_cuda"] = torch.version.cuda or ""
    if torch.version.cuda:
        try:
            # ncclGetVersion only: no CUDA context is made.
            v = torch.cuda.nccl.version()
            if isinstance(v, int):  # torch < 1.13: NCCL_VERSION_CODE
                v = (v // 10000, v // 100 % 100, v % 100) if v >= 10000 else (v // 1000, v // 100 % 10, v % 100)
            out["nccl"] = ".".join(str(x) for x in v[:3])
        except Exception:
            pass  # a build without NCCL
except Exception as e:
    out["torch_error"] = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
print(json.dumps(out))
`

// pyProbe is what the job's Python reports about itself.
type pyProbe struct {
	Python     string `json:"python"`
	Numpy      string `json:"numpy"`
	Torch      string `json:"torch"`
	TorchCUDA  string `json:"torch_cuda"` // "" for a CPU build
	TorchError string `json:"torch_error"`
	// Executable is sys.executable: the interpreter the jobs run with.
	Executable string `json:"executable"`
	// SiteCustomize is the sitecustomize module the hook's own chains to
	// ("" when none).
	SiteCustomize string `json:"sitecustomize"`
	// NCCL is the NCCL torch loads (torch.cuda.nccl.version()), "" for a CPU
	// build or when not reported; NCCLLib the pip wheel's library, if any.
	NCCL    string `json:"nccl"`
	NCCLLib string `json:"nccl_lib"`
	err     string // the interpreter could not run the probe
}

const probeTimeout = 60 * time.Second

func (h *Host) python() pyProbe {
	return memo(h, "python", func() pyProbe {
		if h.Run == nil {
			return pyProbe{err: "not run (--no-python)"}
		}
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		out, err := h.Run(ctx, h.pythonName(), "-c", probeScript)
		if err != nil {
			return pyProbe{err: firstLine(err.Error())}
		}
		var p pyProbe
		if err := json.Unmarshal(lastLine(out), &p); err != nil {
			return pyProbe{err: "unexpected output: " + firstLine(string(out))}
		}
		return p
	})
}

func (h *Host) pythonName() string {
	if h.Python == "" {
		return "python3"
	}
	return h.Python
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// lastLine: the probe's JSON is its last line (a sitecustomize may print).
func lastLine(b []byte) []byte {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return []byte(s)
}

// version parses the leading numbers of "2.11.0+cu130" / "1.24.2" /
// "2.1.0rc1" / "13.0"; parsing stops at the first part that is not a number.
func version(s string) []int {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "+")
	var v []int
	for _, p := range strings.Split(s, ".") {
		d := strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' })
		if d == 0 {
			break
		}
		if d > 0 {
			p = p[:d]
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			break
		}
		v = append(v, n)
		if d > 0 {
			break
		}
	}
	return v
}

// versionLess compares dotted versions numerically; missing parts are 0.
func versionLess(a, b []int) bool {
	for i := 0; i < len(a) || i < len(b); i++ {
		x, y := at(a, i), at(b, i)
		if x != y {
			return x < y
		}
	}
	return false
}

func at(v []int, i int) int {
	if i < len(v) {
		return v[i]
	}
	return 0
}
