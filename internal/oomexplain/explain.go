package oomexplain

import (
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/allocconf"
)

// Verdict identifies the explanation's conclusion. Values are part of the
// JSON schema.
type Verdict string

// Verdicts.
const (
	VerdictCgroupLimit     Verdict = "cgroup_limit"         // a memory cgroup's limit was hit
	VerdictHostExhausted   Verdict = "host_exhausted"       // the whole host ran out of RAM (+swap)
	VerdictCpusetExhausted Verdict = "cpuset_exhausted"     // the allowed NUMA nodes ran out
	VerdictFragmentation   Verdict = "fragmentation"        // the cache had the bytes but not in one block
	VerdictOtherProcesses  Verdict = "other_processes"      // other processes held the GPU memory needed
	VerdictOutsidePyTorch  Verdict = "outside_pytorch"      // this process held it outside PyTorch's cache
	VerdictMemoryFraction  Verdict = "memory_fraction"      // a per-process fraction limit was hit
	VerdictDoesNotFit      Verdict = "does_not_fit"         // the job itself needs more than the GPU has
	VerdictRequestTooLarge Verdict = "request_too_large"    // one request exceeds the whole GPU
	VerdictGPUOOM          Verdict = "gpu_oom"              // out of GPU memory, numbers unknown
	VerdictSharedMemory    Verdict = "shm_too_small"        // /dev/shm too small for DataLoader workers
	VerdictFDLimit         Verdict = "fd_limit"             // RLIMIT_NOFILE too low for fd sharing
	VerdictKilledByKernel  Verdict = "killed_by_kernel_oom" // a worker/child was the kernel OOM victim
	VerdictKilledSIGKILL   Verdict = "killed_sigkill"       // SIGKILL of unknown origin (often OOM)
	VerdictSlurmLimit      Verdict = "slurm_memory_limit"   // the Slurm job's cgroup limit
	VerdictSystemdOOMD     Verdict = "systemd_oomd"         // userspace OOM killer on pressure/swap
	VerdictWorkerExited    Verdict = "worker_exited"        // a worker exited with an error code (not a kill)
	VerdictIncomplete      Verdict = "incomplete_report"    // too little of the kernel report to tell
)

// Explanation is the verdict on one incident with the arithmetic behind it
// and what to do about it, rendered in Context.Lang. Messages keeps the
// same content as message ids with arguments.
type Explanation struct {
	Verdict Verdict `json:"verdict"`
	// Alternatives are verdicts the evidence cannot rule out; the summary
	// names them too. Empty when the evidence is clear.
	Alternatives []Verdict `json:"alternatives,omitempty"`
	// Summary is one sentence for people.
	Summary string `json:"summary"`
	// Arithmetic shows the computation, one step per entry, sizes printed
	// the way PyTorch prints them.
	Arithmetic []string `json:"arithmetic,omitempty"`
	// Recommendations are concrete actions, most useful first; Advice has
	// the same with the evidence that called for each.
	Recommendations []string `json:"recommendations,omitempty"`
	Advice          []Advice `json:"advice,omitempty"`
	// Messages is the explanation before rendering.
	Messages *Messages `json:"messages,omitempty"`
}

// Advice is one recommendation and the evidence that triggered it.
type Advice struct {
	ID      string `json:"id"`
	Text    string `json:"text"`
	Because string `json:"because,omitempty"`
}

// Messages is an explanation as message ids with arguments.
type Messages struct {
	Summary    Msg   `json:"summary"`
	Arithmetic []Msg `json:"arithmetic,omitempty"`
	Advice     []Msg `json:"advice,omitempty"`
}

// Context is what the caller knows beyond the log: `torchmem run` passes
// its job's pids, cgroup, allocator stats from the hook, GPU processes
// from NVML; `torchmem oom` passes the host's /dev/shm size and fd limit
// when it reads this host's own kernel log. Zero values mean unknown.
type Context struct {
	// JobPIDs are the supervised job's processes (incl. DataLoader workers).
	JobPIDs []int
	// Leak: the job's memory climbed steadily with its steps
	// (RunEvidence.Growth). Raising the limit only delays that kill, so
	// the limit's owner is not told to raise it; the leak's advice says
	// what to look for instead.
	Leak bool
	// CgroupPath (as the kernel prints it, e.g. "/torchmem/run-42") and
	// CgroupLimitBytes of the job's memory cgroup.
	CgroupPath       string
	CgroupLimitBytes int64
	// MemoryStats are torch.cuda.memory_stats() entries from the hook
	// ("allocated_bytes.all.current", "reserved_bytes.all.peak", ...).
	MemoryStats map[string]int64
	// GPUProcesses are the processes NVML saw on the GPU (with names).
	GPUProcesses []GPUProcess
	// SameHost says the log is this host's (its live kernel log, this
	// boot, or a run supervised here): only then are ShmSizeBytes and
	// NoFileLimit facts about it.
	SameHost bool
	// ShmSizeBytes is the size of /dev/shm; NoFileLimit the soft
	// RLIMIT_NOFILE (of the job, or of the host reading the log).
	ShmSizeBytes int64
	NoFileLimit  uint64
	// HostRAMBytes is MemTotal, for sizing advice.
	HostRAMBytes int64
	// Supervised: the incident is from a job torchmem ran (the post-mortem),
	// so advice says what to look at in the run, not to run under torchmem.
	Supervised bool
	// Lang is the language of the rendered text (English when unset or
	// without a catalog).
	Lang language.Tag
	// AllocConf: the job's PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF,
	// when known (a run torchmem supervised); nil otherwise. Fragmentation
	// advice does not ask for what is set already.
	AllocConf *allocconf.Conf
}

// ExplainAll correlates incs and sets each one's Explanation.
func ExplainAll(incs []Incident, ctx Context) {
	Correlate(incs)
	for i := range incs {
		e := explainWith(incs, i, ctx)
		incs[i].Explanation = &e
	}
}

// Explain returns the verdict on one incident on its own (without the
// incidents it may be correlated with; ExplainAll uses those too).
func Explain(inc *Incident, ctx Context) Explanation {
	one := []Incident{*inc}
	one[0].Related = nil
	return explainWith(one, 0, ctx)
}

// finding is what a rule set concludes, before rendering.
type finding struct {
	verdict Verdict
	alts    []Verdict
	summary Msg
	arith   []Msg
	advice  []advice
}

// advice is a recommendation with the evidence for it (may be unset).
type advice struct{ what, because Msg }

func (f *finding) note(ms ...Msg)       { f.arith = append(f.arith, ms...) }
func (f *finding) do(what, because Msg) { f.advice = append(f.advice, advice{what, because}) }
func (f *finding) doAll(because Msg, what ...Msg) {
	for _, w := range what {
		f.do(w, because)
	}
}

// render turns a finding into the Explanation in lang, dropping repeated
// advice (a related incident's rules may give the same).
func (f finding) render(lang language.Tag) Explanation {
	e := Explanation{Verdict: f.verdict, Alternatives: f.alts, Summary: render(lang, f.summary),
		Arithmetic: renderAll(lang, f.arith),
		Messages:   &Messages{Summary: f.summary, Arithmetic: f.arith}}
	seen := map[string]bool{}
	for _, a := range f.advice {
		text := render(lang, a.what)
		if seen[text] {
			continue
		}
		seen[text] = true
		ad := Advice{ID: a.what.ID, Text: text}
		if !a.because.zero() {
			ad.Because = render(lang, a.because)
		}
		e.Advice = append(e.Advice, ad)
		e.Recommendations = append(e.Recommendations, text)
		e.Messages.Advice = append(e.Messages.Advice, a.what)
	}
	return e
}
