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
out = {"python": sys.version.split()[0]}
try:
    import numpy
    out["numpy"] = numpy.__version__
except Exception:
    pass  # reported as "numpy absent"
try:
    import torch
    out["torch"] = torch.__version__
    out["torch_cuda"] = torch.version.cuda or ""
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
	err        string // the interpreter could not run the probe
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
