package doctor

import (
	"fmt"
	"strconv"
	"strings"
)

// checkAllocConf validates PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF
// the way the allocator will read them at the first CUDA allocation, where
// a mistake is a crash (unknown option) or silently ignored (conflicts).
func checkAllocConf(h *Host) []Finding {
	cuda, generic := h.getenv("PYTORCH_CUDA_ALLOC_CONF"), h.getenv("PYTORCH_ALLOC_CONF")
	if cuda == "" && generic == "" {
		return []Finding{newFinding("pytorch.alloc_conf", "pytorch", OK, "PYTORCH_CUDA_ALLOC_CONF is not set (allocator defaults)")}
	}
	var out []Finding
	if cuda != "" && generic != "" && cuda != generic {
		out = append(out, newFinding("pytorch.alloc_conf.both", "pytorch", Warn, "both PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF are set, differently").
			ev("env PYTORCH_ALLOC_CONF", generic).ev("env PYTORCH_CUDA_ALLOC_CONF", cuda).
			why("Recent PyTorch reads PYTORCH_ALLOC_CONF first and older versions only PYTORCH_CUDA_ALLOC_CONF: the same job behaves differently after an upgrade.").
			fix("Set one of them."))
	}
	name, val := "PYTORCH_CUDA_ALLOC_CONF", cuda
	if val == "" {
		name, val = "PYTORCH_ALLOC_CONF", generic
	}
	return append(out, allocConfFindings(name, val, version(h.python().Torch))...)
}

func allocConfFindings(name, val string, torch []int) []Finding {
	src := "env " + name
	opts, err := parseAllocConf(val)
	if err != nil {
		return []Finding{newFinding("pytorch.alloc_conf", "pytorch", Fail, name+" cannot be parsed").ev(src, val).
			why("PyTorch raises at the first CUDA allocation.").fix("Write it as key:value,key:value (e.g. expandable_segments:True).")}
	}
	var problems []string
	sev := OK
	keys := map[string]string{}
	for _, kv := range opts {
		k, v := kv[0], kv[1]
		keys[k] = v
		since, known := allocOptions[k]
		switch {
		case !known:
			problems, sev = append(problems, fmt.Sprintf("unknown option %q: PyTorch raises 'Unrecognized CachingAllocator option'", k)), Fail
		case len(torch) > 0 && versionLess(torch, since):
			problems, sev = append(problems, fmt.Sprintf("%s needs torch %d.%d or later (installed: %s)", k, since[0], since[1], joinVersion(torch))), Fail
		default:
			if msg := badAllocValue(k, v); msg != "" {
				problems, sev = append(problems, msg), Fail
			}
		}
	}
	if keys["backend"] == "cudaMallocAsync" {
		for _, k := range nativeOnly {
			if _, ok := keys[k]; ok {
				problems = append(problems, k+" is ignored with backend:cudaMallocAsync")
				sev = max(sev, Warn)
			}
		}
	}
	f := newFinding("pytorch.alloc_conf", "pytorch", sev, name+" is valid").ev(src, val)
	if sev == OK {
		return []Finding{f}
	}
	f.Title = name + ": " + strings.Join(problems, "; ")
	return []Finding{f.why("The caching allocator parses this at the first CUDA allocation: an unknown option or bad value kills the job there, and options of the native allocator do nothing under cudaMallocAsync.").
		fix("Keep only valid options, e.g. " + name + "=expandable_segments:True (torch >= 2.1) to reduce fragmentation.")}
}

func badAllocValue(k, v string) string {
	switch k {
	case "expandable_segments", "release_lock_on_cudamalloc", "pinned_use_cuda_host_register", "pinned_use_background_threads", "graph_capture_record_stream_reuse":
		if v != "True" && v != "False" && v != "true" && v != "false" {
			return fmt.Sprintf("%s must be True or False, not %q", k, v)
		}
	case "backend":
		if v != "native" && v != "cudaMallocAsync" {
			return fmt.Sprintf("backend must be native or cudaMallocAsync, not %q", v)
		}
	case "garbage_collection_threshold", "per_process_memory_fraction":
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x <= 0 || x >= 1 && k == "garbage_collection_threshold" || x > 1 {
			return fmt.Sprintf("%s must be a fraction in (0, 1), not %q", k, v)
		}
	case "max_split_size_mb":
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n <= 20 {
			return fmt.Sprintf("max_split_size_mb must be a number above 20, not %q", v)
		}
	}
	return ""
}

func joinVersion(v []int) string {
	var s []string
	for _, n := range v {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ".")
}

func checkModuleLoading(h *Host) []Finding {
	v := h.getenv("CUDA_MODULE_LOADING")
	f := newFinding("pytorch.cuda_module_loading", "pytorch", OK, "CUDA_MODULE_LOADING is "+orDefault(v, "unset (PyTorch sets LAZY)")).ev("env CUDA_MODULE_LOADING", orDefault(v, "unset"))
	switch v {
	case "", "LAZY":
		return []Finding{f}
	case "EAGER":
		f.Severity = Info
		return []Finding{f.why("EAGER loads every kernel of every CUDA library at initialisation: hundreds of MB more GPU memory per process (each rank, each process touching CUDA) and a slower start.").
			fix("unset CUDA_MODULE_LOADING (PyTorch defaults to LAZY).")}
	}
	f.Severity = Warn
	return []Finding{f.why("CUDA accepts only LAZY or EAGER.").fix("unset CUDA_MODULE_LOADING or set it to LAZY.")}
}
