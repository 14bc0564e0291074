package doctor

import (
	"fmt"
)

func checkPythonEnv(h *Host) []Finding {
	p := h.python()
	src := h.pythonName() + " -c 'import torch, numpy'"
	if h.Run == nil {
		// --no-python: the user chose this, nothing to fix.
		return []Finding{newFinding("pytorch.versions", "pytorch", Info, "versions.title_skipped").
			ev(src, "not run")}
	}
	if p.err != "" {
		f := newFinding("pytorch.versions", "pytorch", Info, "versions.title_no_python", h.pythonName()).ev(src, p.err).
			fix("versions.python.fix")
		if h.PythonGiven {
			// A named interpreter that does not run is a typo or a broken
			// venv, not a host without Python: do not pass quietly.
			f.Severity = Warn
			f = f.why("versions.given.why")
		}
		return []Finding{f}
	}
	if p.Torch == "" {
		return []Finding{newFinding("pytorch.versions", "pytorch", Info, "versions.title_no_torch", h.pythonName()).
			ev(src, orDefault(p.TorchError, "no torch")).ev(src, "python "+p.Python).
			fix("versions.python.fix")}
	}
	build := word("versions.cpu_build")
	if p.TorchCUDA != "" {
		build = word("versions.cuda_build", p.TorchCUDA)
	}
	numpy := word("versions.absent")
	if p.Numpy != "" {
		numpy = word("versions.plain", p.Numpy)
	}
	f := newFinding("pytorch.versions", "pytorch", OK, "versions.title", p.Torch, build, numpy, p.Python).
		ev(src, fmt.Sprintf("torch %s, torch.version.cuda %s, numpy %s", p.Torch, orDefault(p.TorchCUDA, "None"), orDefault(p.Numpy, "absent")))
	if p.Numpy != "" && at(version(p.Numpy), 0) >= 2 && versionLess(version(p.Torch), []int{2, 3}) {
		f.Severity = Fail
		f = f.titled("versions.title_numpy2", p.Torch, p.Numpy).why("versions.numpy2.why").fix("versions.numpy2.fix")
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
	f := newFinding("gpu.cuda_compat", "gpu", OK, "").ev(src, orDefault(p.TorchCUDA, "None")).evMsg(h.GPU.Info().Backend, "ev.cuda_driver_api", orUnknown(driverCUDA))
	switch {
	case len(devs) == 0 && p.TorchCUDA == "":
		return nil // CPU host, CPU torch: nothing to compare
	case len(devs) == 0:
		f.Severity = Info
		return []Finding{f.titled("cuda_compat.title_no_gpu", p.TorchCUDA)}
	case p.TorchCUDA == "":
		f.Severity = Warn
		return []Finding{f.titled("cuda_compat.title_cpu_torch", p.Torch).why("cuda_compat.cpu_torch.why").fix("cuda_compat.cpu_torch.fix")}
	case driverCUDA == "":
		f.Severity = Info
		return []Finding{f.titled("cuda_compat.title_driver_unknown", p.TorchCUDA)}
	}
	tv, dv := version(p.TorchCUDA), version(driverCUDA)
	f = f.titled("cuda_compat.title", driverCUDA, p.TorchCUDA)
	switch {
	case at(dv, 0) < at(tv, 0):
		f.Severity = Fail
		return []Finding{f.why("cuda_compat.old_major.why").fix("cuda_compat.old_major.fix", at(dv, 0))}
	case versionLess(dv, tv):
		f.Severity = Warn
		return []Finding{f.why("cuda_compat.old_minor.why").fix("cuda_compat.old_minor.fix", p.TorchCUDA)}
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
