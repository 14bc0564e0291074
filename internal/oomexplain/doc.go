// Package oomexplain finds out-of-memory incidents in kernel and training
// logs and explains them.
//
// It is shared by `torchmem oom` and the post-mortem of `torchmem run`.
//
// Reading (streaming, bounded memory: lines are cut at Options.MaxLine,
// each incident keeps at most Options.MaxRaw raw lines and MaxTasks task
// table rows):
//
//	Parse(r io.Reader, opts Options) ([]Incident, error)    a whole file/stream
//	p := NewParser(opts)                                      line by line (live)
//	p.Feed(kmsg.Line) / p.FeedBytes([]byte) ; p.Close() []Incident
//	Options.OnIncident is called as soon as an incident is complete (--follow)
//	ParseLines(lines []kmsg.Line, opts) []Incident         lines from a kmsg reader
//	ReadKernel(ctx, LogConfig{Since: t}, opts) ([]Incident, source, error)
//	Follow(ctx, LogConfig{}, opts, host, emit)        the live kernel log, explained
//	                                                          this boot's kernel log
//	Filter(incs, since time.Time, pids []int) []Incident      narrow before explaining
//
// Every incident kind has its own parser (kernel.go, cuda.go, host.go),
// each a small state machine fed the message text of every line.
//
// Explaining:
//
//	Correlate(incs []Incident)                 links a DataLoader/torchrun/Slurm
//	                                           message to the kernel OOM kill of
//	                                           the same pid or time (sets Related)
//	Explain(inc *Incident, ctx Context) Explanation
//	ExplainAll(incs []Incident, ctx Context)   Correlate + Explain for each
//
// Context carries what a supervisor knows and a log does not: the job's
// pids, its cgroup and limit, allocator stats from the in-process hook,
// the GPU processes seen by NVML, /dev/shm size and RLIMIT_NOFILE.
//
// JSON: sizes are bytes (int64), pids are numbers, a field the log did not
// give is absent (pointers), never zero. See docs/oom.md for the schema.
package oomexplain
