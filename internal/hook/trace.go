package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/torchmem/torchmem/internal/hook/python"
)

// Environment variables of torchmem estimate --trace (torchmem_hook/_trace.py).
const (
	EnvTrace         = "TORCHMEM_TRACE"           // the trace file; the tracer stays off without it
	EnvTraceSteps    = "TORCHMEM_TRACE_STEPS"     // optimizer steps to trace, then exit 0
	EnvTraceDevice   = "TORCHMEM_TRACE_DEVICE"    // meta (no data), cpu (real tensors, tests) or real (the GPU, --real)
	EnvTraceGPUName  = "TORCHMEM_TRACE_GPU_NAME"  // what torch.cuda.get_device_name() says
	EnvTraceGPUBytes = "TORCHMEM_TRACE_GPU_BYTES" // get_device_properties().total_memory
	EnvTraceGPUCC    = "TORCHMEM_TRACE_GPU_CC"    // compute capability x10 (90): SDPA's kernel choice
	EnvTraceMaxBytes = "TORCHMEM_TRACE_MAX_BYTES" // the trace file's size cap
	// EnvTraceWorld: the world a process group has when neither the
	// program nor a launcher says (torchrun --nproc-per-node gpu).
	EnvTraceWorld = "TORCHMEM_TRACE_WORLD_SIZE"
	// EnvTraceAutocast: bfloat16 or float16 to trace the program's forward
	// under CUDA autocast, as the AMP recipe runs it (the amp lever's
	// retrace, torchmem_hook/_trace_amp.py); empty: as it is.
	EnvTraceAutocast = "TORCHMEM_TRACE_AUTOCAST"
)

// TraceOptions say what the tracer records.
type TraceOptions struct {
	Steps    int
	Device   string // "meta", "cpu" or "real"
	GPUName  string
	GPUBytes int64
	GPUCC    int // compute capability x10; 0: the tracer's default (sm90)
	MaxBytes int64
	World    int    // 0: not given (one rank, or what the launcher says)
	Autocast string // "", "bfloat16" or "float16" (meta only)
}

// TraceFile is the trace's name in the directory InstallTrace is given.
const TraceFile = "trace.tsv"

// What a --real run (torchmem_hook/_trace_real.py) writes next to the
// trace: the allocator's snapshot pickle and its figures as JSON.
const (
	TraceRealSnapshot = "real.pickle"
	TraceRealStats    = "real.json"
)

// InstallTrace writes the embedded Python hook into dir/python and returns
// the variables that make a job trace itself into dir/trace.tsv instead of
// reporting to a supervisor (the file must not exist: the first process
// creates it, children of the job do not trace).
func InstallTrace(dir string, o TraceOptions) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create trace dir %s: %w", dir, err)
	}
	pyDir := filepath.Join(dir, PythonDir)
	if err := python.WriteTree(pyDir); err != nil {
		return nil, err
	}
	if o.Device != "meta" && o.Device != "cpu" && o.Device != "real" {
		return nil, fmt.Errorf("trace device %q: want meta, cpu or real", o.Device)
	}
	if o.Autocast != "" && (o.Device != "meta" || o.Autocast != "bfloat16" && o.Autocast != "float16") {
		return nil, fmt.Errorf("trace autocast %q on %s: want bfloat16 or float16 on meta", o.Autocast, o.Device)
	}
	return []string{
		"PYTHONPATH=" + pyDir,
		EnvTrace + "=" + filepath.Join(dir, TraceFile),
		EnvTraceSteps + "=" + strconv.Itoa(max(1, o.Steps)),
		EnvTraceDevice + "=" + o.Device,
		EnvTraceGPUName + "=" + o.GPUName,
		EnvTraceGPUBytes + "=" + strconv.FormatInt(o.GPUBytes, 10),
		EnvTraceGPUCC + "=" + strconv.Itoa(o.GPUCC),
		EnvTraceMaxBytes + "=" + strconv.FormatInt(o.MaxBytes, 10),
		EnvTraceWorld + "=" + strconv.Itoa(max(0, o.World)),
		EnvTraceAutocast + "=" + o.Autocast,
	}, nil
}
