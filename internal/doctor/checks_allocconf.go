package doctor

import (
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/allocconf"
)

// checkAllocConf validates PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF
// the way the allocator will read them at the first CUDA allocation, where
// a mistake is a crash (unknown option) or silently ignored (conflicts).
func checkAllocConf(h *Host) []Finding {
	cuda, generic := h.getenv(allocconf.EnvCUDA), h.getenv(allocconf.EnvGeneric)
	if cuda == "" && generic == "" {
		return []Finding{newFinding("pytorch.alloc_conf", "pytorch", OK, "alloc_conf.title_unset")}
	}
	var out []Finding
	if cuda != "" && generic != "" && cuda != generic {
		out = append(out, newFinding("pytorch.alloc_conf.both", "pytorch", Warn, "alloc_conf.title_both").
			ev("env PYTORCH_ALLOC_CONF", generic).ev("env PYTORCH_CUDA_ALLOC_CONF", cuda).
			why("alloc_conf.both.why").fix("alloc_conf.both.fix"))
	}
	name, val := allocconf.FromEnv(h.getenv)
	return append(out, allocConfFindings(name, val, version(h.python().Torch))...)
}

func allocConfFindings(name, val string, torch []int) []Finding {
	src := "env " + name
	opts, err := allocconf.Split(val)
	if err != nil {
		return []Finding{newFinding("pytorch.alloc_conf", "pytorch", Fail, "alloc_conf.title_unparsable", name).ev(src, val).
			why("alloc_conf.unparsable.why").fix("alloc_conf.unparsable.fix")}
	}
	var problems msgList
	sev := OK
	keys := map[string]string{}
	for _, kv := range opts {
		k, v := kv[0], kv[1]
		keys[k] = v
		since, known := allocOptions[k]
		switch {
		case !known:
			problems, sev = append(problems, word("alloc_conf.unknown", k)), Fail
		case len(torch) > 0 && versionLess(torch, since):
			problems, sev = append(problems, word("alloc_conf.too_new", k, since[0], since[1], joinVersion(torch))), Fail
		default:
			if m := badAllocValue(k, v); m.id != "" {
				problems, sev = append(problems, m), Fail
			}
		}
	}
	if keys["backend"] == "cudaMallocAsync" {
		for _, k := range nativeOnly {
			if _, ok := keys[k]; ok {
				problems = append(problems, word("alloc_conf.ignored_async", k))
				sev = max(sev, Warn)
			}
		}
	}
	if splitWithExpandable(keys) && (len(torch) == 0 || !versionLess(torch, allocOptions["expandable_segments"])) {
		problems = append(problems, word("alloc_conf.split_expandable"))
		sev = max(sev, Warn)
	}
	f := newFinding("pytorch.alloc_conf", "pytorch", sev, "alloc_conf.title_valid", name).ev(src, val)
	if sev != OK {
		f = f.titled("alloc_conf.title_problems", name, problems).why("alloc_conf.why").fix("alloc_conf.fix", name)
	}
	return append([]Finding{f}, gcIdleFindings(name, val)...)
}

// gcIdleFindings: garbage_collection_threshold where it does nothing.
// Under expandable segments it never does; without a memory fraction in
// the variable it does only if the program sets one itself
// (torch.cuda.set_per_process_memory_fraction), which doctor cannot see:
// a note, not a warning. (Under cudaMallocAsync: alloc_conf.ignored_async.)
func gcIdleFindings(name, val string) []Finding {
	c, err := allocconf.Parse(val)
	if err != nil {
		return nil // the finding above says what is wrong
	}
	why := c.GCIdle()
	if why != allocconf.GCNoFraction && why != allocconf.GCExpandable {
		return nil
	}
	return []Finding{newFinding("pytorch.alloc_conf.gc_idle", "pytorch", Info, "alloc_conf.gc_idle.title."+why, name).
		ev("env "+name, val).why("alloc_conf.gc_idle.why."+why).fix("alloc_conf.gc_idle.fix."+why, name)}
}

// splitWithExpandable: max_split_size_mb and expandable_segments:True
// together, under which the allocator's oversize rule keeps freed blocks
// from smaller requests inside expandable segments too, and reserved
// grows by what each cycle maps anew (pytorch/pytorch#123548; estimate's
// allocator model reproduces the report's figures). Said only where the
// torch has expandable segments (2.1): before, that option is the fault.
func splitWithExpandable(keys map[string]string) bool {
	_, split := keys["max_split_size_mb"]
	e := keys["expandable_segments"]
	return split && (e == "True" || e == "true") && keys["backend"] != "cudaMallocAsync"
}

func badAllocValue(k, v string) msg {
	switch k {
	case "expandable_segments", "release_lock_on_cudamalloc", "pinned_use_cuda_host_register", "pinned_use_background_threads", "graph_capture_record_stream_reuse":
		if v != "True" && v != "False" && v != "true" && v != "false" {
			return word("alloc_conf.bad_bool", k, v)
		}
	case "backend":
		if v != "native" && v != "cudaMallocAsync" {
			return word("alloc_conf.bad_backend", v)
		}
	case "garbage_collection_threshold", "per_process_memory_fraction":
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x <= 0 || x >= 1 && k == "garbage_collection_threshold" || x > 1 {
			return word("alloc_conf.bad_fraction", k, v)
		}
	case "max_split_size_mb":
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n <= 20 {
			return word("alloc_conf.bad_split", v)
		}
	}
	return msg{}
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
	f := newFinding("pytorch.cuda_module_loading", "pytorch", OK, "module_loading.title", v)
	if v == "" {
		f = f.titled("module_loading.title_unset")
	}
	f = f.ev("env CUDA_MODULE_LOADING", orDefault(v, "unset"))
	switch v {
	case "", "LAZY":
		return []Finding{f}
	case "EAGER":
		f.Severity = Info
		return []Finding{f.why("module_loading.eager.why").fix("module_loading.eager.fix")}
	}
	f.Severity = Warn
	return []Finding{f.why("module_loading.bad.why").fix("module_loading.bad.fix")}
}
