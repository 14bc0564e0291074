package doctor

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/torchmem/torchmem/internal/hook/python"
)

// hookProbeScript imports the hook (torchmem_hook and its agent, which
// pulls in every module) from the directory in argv[1], as a job's
// sitecustomize would, without arming it or importing torch, and prints
// what the hook itself says about this interpreter, as JSON:
//
//	{"python": "3.6.15", "min_python": [3, 6], "loads": true, "degraded": ["no os.register_at_fork ..."]}
//
// It runs on Python 2 too (loads is then false), so doctor can say why.
const hookProbeScript = `import json, sys
sys.path.insert(0, sys.argv[1])
out = {"python": sys.version.split()[0]}
try:
    import torchmem_hook, torchmem_hook._agent
    from torchmem_hook import _common
    out["min_python"] = list(_common.MIN_PYTHON)
    out["loads"] = tuple(sys.version_info[:2]) >= tuple(_common.MIN_PYTHON)
    out["degraded"] = _common.degraded()
except Exception as e:
    out["error"] = ("%s: %s" % (type(e).__name__, e))[:300]
print(json.dumps(out))
`

// hookProbeTimeout bounds the import: the hook's modules import only the
// standard library, so seconds are plenty even on a cold NFS home.
const hookProbeTimeout = 20 * time.Second

// hookProbe is what the jobs' interpreter says after importing the hook.
type hookProbe struct {
	Python    string   `json:"python"`
	MinPython []int    `json:"min_python"`
	Loads     bool     `json:"loads"`
	Degraded  []string `json:"degraded"`
	Error     string   `json:"error"` // the import raised
	err       string   // the probe itself could not run
}

// hookProbe writes the embedded hook into a temporary directory and
// imports it with the jobs' interpreter (bounded by hookProbeTimeout).
func (h *Host) hookProbe() hookProbe {
	return memo(h, "hookprobe", func() hookProbe {
		if h.Run == nil {
			return hookProbe{err: "not run (--no-python)"}
		}
		dir, err := os.MkdirTemp("", "torchmem-doctor-hook-")
		if err != nil {
			return hookProbe{err: err.Error()}
		}
		defer os.RemoveAll(dir)
		if err := python.WriteTree(dir); err != nil {
			return hookProbe{err: err.Error()}
		}
		ctx, cancel := context.WithTimeout(context.Background(), hookProbeTimeout)
		defer cancel()
		// -B: no __pycache__ in a directory about to be removed; -s: the
		// user's site-packages cannot shadow the hook.
		out, err := h.Run(ctx, h.pythonName(), "-B", "-s", "-c", hookProbeScript, dir)
		if err != nil {
			return hookProbe{err: firstLine(err.Error())}
		}
		var p hookProbe
		if err := json.Unmarshal(lastLine(out), &p); err != nil {
			return hookProbe{err: "unexpected output: " + firstLine(string(out))}
		}
		return p
	})
}
