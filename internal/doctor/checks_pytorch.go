package doctor

import (
	"fmt"
	"strconv"
	"strings"
)

func checkPythonEnv(h *Host) []Finding {
	p := h.python()
	src := h.pythonName() + " -c 'import torch, numpy'"
	if h.Run == nil {
		// --no-python: the user chose this, nothing to fix.
		return []Finding{newFinding("pytorch.versions", "pytorch", Info, "Python probe skipped (--no-python): torch, numpy and CUDA build not checked").
			ev(src, "not run")}
	}
	if p.err != "" {
		f := newFinding("pytorch.versions", "pytorch", Info, h.pythonName()+" could not be run: PyTorch checks skipped").ev(src, p.err).
			fix("Pass the interpreter that runs the jobs: torchmem doctor --python /path/to/venv/bin/python")
		if h.PythonGiven {
			// A named interpreter that does not run is a typo or a broken
			// venv, not a host without Python: do not pass quietly.
			f.Severity = Warn
			f = f.why("The interpreter given with --python is the one the jobs are meant to run with; if it cannot even start, neither can they, and the torch/CUDA checks were not made.")
		}
		return []Finding{f}
	}
	if p.Torch == "" {
		return []Finding{newFinding("pytorch.versions", "pytorch", Info, "torch is not importable with "+h.pythonName()).
			ev(src, orDefault(p.TorchError, "no torch")).ev(src, "python "+p.Python).
			fix("Pass the interpreter that runs the jobs: torchmem doctor --python /path/to/venv/bin/python")}
	}
	build := "CPU build"
	if p.TorchCUDA != "" {
		build = "CUDA " + p.TorchCUDA
	}
	f := newFinding("pytorch.versions", "pytorch", OK, fmt.Sprintf("torch %s (%s), numpy %s, python %s", p.Torch, build, orDefault(p.Numpy, "absent"), p.Python)).
		ev(src, fmt.Sprintf("torch %s, torch.version.cuda %s, numpy %s", p.Torch, orDefault(p.TorchCUDA, "None"), orDefault(p.Numpy, "absent")))
	if p.Numpy != "" && at(version(p.Numpy), 0) >= 2 && versionLess(version(p.Torch), []int{2, 3}) {
		f.Severity = Fail
		f.Title = fmt.Sprintf("torch %s was built against NumPy 1.x but numpy %s is installed", p.Torch, p.Numpy)
		f = f.why("Wheels of torch before 2.3 are compiled against the NumPy 1.x ABI: under NumPy 2 'A module that was compiled using NumPy 1.x cannot be run in NumPy 2.x' and tensor<->array conversion (every DataLoader collate of numpy data) fails.").
			fix("pip install 'numpy<2' in this environment, or upgrade torch to 2.3 or later.")
	}
	return []Finding{f}
}

// checkCUDACompat compares the CUDA version torch was built for with what
// the driver supports.
func checkCUDACompat(h *Host) []Finding {
	p := h.python()
	if p.err != "" || p.Torch == "" || h.GPU == nil {
		return nil
	}
	devs := h.gpus().devs
	driverCUDA := h.GPU.Info().CUDADriverVersion
	src := h.pythonName() + " -c 'import torch; print(torch.version.cuda)'"
	f := newFinding("gpu.cuda_compat", "gpu", OK, "").ev(src, orDefault(p.TorchCUDA, "None")).ev(h.GPU.Info().Backend, "CUDA driver API "+orDefault(driverCUDA, "unknown"))
	switch {
	case len(devs) == 0 && p.TorchCUDA == "":
		return nil // CPU host, CPU torch: nothing to compare
	case len(devs) == 0:
		f.Severity, f.Title = Info, "torch is a CUDA "+p.TorchCUDA+" build but this host has no NVIDIA GPU"
		return []Finding{f}
	case p.TorchCUDA == "":
		f.Severity, f.Title = Warn, "torch "+p.Torch+" is a CPU-only build on a GPU host"
		return []Finding{f.why("torch.cuda.is_available() is False: jobs silently train on the CPU and in host RAM.").
			fix("Install a CUDA build of torch matching the driver (pip install torch --index-url https://download.pytorch.org/whl/cuXYZ).")}
	case driverCUDA == "":
		f.Severity, f.Title = Info, "CUDA driver version unknown; torch built for CUDA "+p.TorchCUDA
		return []Finding{f}
	}
	tv, dv := version(p.TorchCUDA), version(driverCUDA)
	f.Title = fmt.Sprintf("driver supports CUDA %s, torch built for CUDA %s", driverCUDA, p.TorchCUDA)
	switch {
	case at(dv, 0) < at(tv, 0):
		f.Severity = Fail
		return []Finding{f.why("The driver is older than the CUDA major version torch needs: CUDA initialisation fails ('The NVIDIA driver on your system is too old').").
			fix("Upgrade the NVIDIA driver, or install a torch build for CUDA " + strconv.Itoa(at(dv, 0)) + ".x.")}
	case versionLess(dv, tv):
		f.Severity = Warn
		return []Finding{f.why("CUDA minor-version compatibility lets this run, but kernels that need PTX JIT for the newer minor version fail (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), and some allocator features (expandable segments' VMM calls) may be missing.").
			fix("Upgrade the driver to one supporting CUDA " + p.TorchCUDA + ".")}
	}
	return []Finding{f}
}

// allocOptions are the keys of PyTorch's CUDA caching allocator config
// (c10/cuda/CUDAAllocatorConfig.cpp, torch 2.x), with the torch version
// that introduced each.
var allocOptions = map[string][]int{
	"max_split_size_mb": {1, 10}, "garbage_collection_threshold": {1, 12}, "roundup_power2_divisions": {1, 12},
	"backend": {2, 0}, "expandable_segments": {2, 1}, "release_lock_on_cudamalloc": {2, 1},
	"pinned_use_cuda_host_register": {2, 1}, "pinned_num_register_threads": {2, 1},
	"max_non_split_rounding_mb": {2, 4}, "pinned_use_background_threads": {2, 5},
	"per_process_memory_fraction": {2, 8}, "graph_capture_record_stream_reuse": {2, 9},
	"pinned_reserve_segment_size_mb": {2, 9},
}

// nativeOnly options do nothing under backend:cudaMallocAsync.
var nativeOnly = []string{"max_split_size_mb", "garbage_collection_threshold", "roundup_power2_divisions", "expandable_segments"}

// parseAllocConf splits "k:v,k:[a:1,b:2]" into ordered key/value pairs,
// keeping commas inside brackets.
func parseAllocConf(s string) ([][2]string, error) {
	var out [][2]string
	depth, start := 0, 0
	flush := func(end int) error {
		item := strings.TrimSpace(s[start:end])
		if item == "" {
			return nil
		}
		k, v, ok := strings.Cut(item, ":")
		if !ok {
			return fmt.Errorf("option %q has no ':value'", item)
		}
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
		return nil
	}
	for i, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case r == ',' && depth == 0:
			if err := flush(i); err != nil {
				return nil, err
			}
			start = i + 1
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced [ ] in %q", s)
	}
	return out, flush(len(s))
}
