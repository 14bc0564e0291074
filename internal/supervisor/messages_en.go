package supervisor

// messagesEN: the English of every id in catalog (messages.go).
var messagesEN = map[string]string{
	// The live status line (statusline.go, policyinputs.go).
	"status.prefix":       "torchmem: ",
	"status.sep":          " | ",
	"status.cgroup":       "cgroup %[1]s",
	"status.cgroup_limit": "cgroup %[1]s/%[2]s (%[3]s free)",
	"status.rss":          "rss %[1]s",
	"status.pss":          "pss %[1]s",
	"status.host":         "host avail %[1]s",
	"status.gpu":          "gpu%[1]d %[2]s",
	"status.alloc":        "alloc %[1]s/%[2]s rsv",
	"status.step":         "step %[1]d",
	"status.oom_in":       "%[1]sOOM in ~%[2]s at +%[3]s/s",

	// Notices while the job runs (actions.go); the policy's reasons are
	// the policy package's English.
	"notice.got_sigint":       "the job got SIGINT",
	"notice.forwarded_sigint": "forwarded SIGINT to the job",
	"notice.ctrl_c_once":      "%[1]s; Ctrl-C again sends SIGTERM and kills it after %[2]s",
	"notice.ctrl_c_twice":     "sent SIGTERM to the job; killing it in %[1]s (Ctrl-C again: now)",
	"notice.kill_now":         "killing the job now",
	"notice.sigterm_twice":    "SIGTERM again: killing the job now",
	"notice.sigterm_once":     "got SIGTERM: sent SIGTERM to the job; killing it in %[1]s (SIGTERM again: now)",
	"notice.grace_over":       "grace period over: killing the job",
	"notice.warning":          "warning: %[1]s",
	"notice.snapshot":         "snapshot: %[1]s",
	"notice.stopping":         "stopping the job: %[1]s",

	// A policy rule's condition on the terminal (the event keeps the
	// policy package's English); metric names stay as written.
	"notice.condition":            "%[1]s: %[2]s = %[3]s (threshold %[4]s)",
	"notice.snapshot_no_cuda":     "; no snapshot: no process of the job uses CUDA (memory snapshots record the CUDA caching allocator)",
	"notice.snapshot_no_hook":     "; no hook, no snapshot",
	"notice.snapshot_requested":   "; snapshot requested from %[1]d process(es) into %[2]s",
	"notice.action_failed":        "policy %[1]s %[2]s: %[3]s",
	"notice.kill_leftover_failed": "killing leftover processes: %[1]s",
	"notice.kernel_log_unread":    "kernel log not read: %[1]s",
	"notice.cgroup_not_removed":   "cgroup not removed: %[1]s",
	"notice.inert_no_limit":       "policy rule %[1]s is inert: the job's cgroup has no memory limit (--memory-max) to project %[2]s to",
	"notice.inert_no_gpu":         "policy rule %[1]s is inert: no GPU to project %[2]s on",
	"notice.inert_psi":            "policy rules on psi.memory.* are inert: %[1]s",
	"notice.no_reaper":            "no reaper to clean up if torchmem dies: %[1]s",
	"notice.hook_off":             "in-process hook off: %[1]s",
	"notice.cgroup_events_off":    "cgroup events off (sampling only): %[1]s",
	"notice.no_owner_record":      "no owner record for a later cleanup: %[1]s",
	"notice.monitor_only_flag":    "monitor-only by request (--no-cgroup): no limits, no whole-job kill at the end",
	"notice.not_root":             "not root and no delegated cgroup (%[1]s)",
	"notice.monitor_only_failed":  "monitor-only: cannot create a memory cgroup: %[1]s; limits not applied",
	"notice.hook":                 "hook: %[1]s",

	// What the job sent over the run's budget (budget.go).
	"budget.rate":    "%[1]d hook message(s) over their rate (%[2]s)",
	"budget.cut":     "%[1]d hook message(s) cut to size",
	"budget.events":  "%[1]d event(s) (%[2]d bytes) over the run's %[3]d events / %[4]d MiB",
	"budget.steps":   "%[1]d step row(s) over the run's %[2]d",
	"budget.notices": "%[1]d hook notice(s) past the first %[2]d",
	"budget.sep":     "; ",
	"budget.dropped": "the job sent more than torchmem keeps; dropped: %[1]s",

	// The post-mortem's frame (explain.go).
	"pm.header":      "torchmem: run %[1]s %[2]s%[3]s after %[4]ss",
	"pm.exit_status": " (exit status %[1]d)",
	"pm.cgroup":      "  cgroup %[1]s",
	"pm.limit":       ", limit %[1]s",
	"pm.events":      ", events: %[1]s",
	"pm.peaks":       "  peaks: %[1]s",
	"pm.peak_sparse": " (read every %[1]s)",
	"pm.steps":       "  optimizer steps: %[1]d, hooked processes: %[2]d%[3]s",
	"pm.step_alloc":  "peak allocated %[1]s at step %[2]d",
	"pm.step_rsv":    "reserved %[1]s at step %[2]d",
	"pm.step_median": "median step %[1]s ms",
	"pm.step_list":   "; %[1]s",
	"pm.sep":         ", ",
	"pm.orphans":     "  killed %[1]d process(es) left behind by the job (orphaned workers)",
	"pm.kernel":      "  kernel: %[1]s",
	"pm.exception":   "  exception: %[1]s",
	"pm.evidence":    "  evidence: %[1]s",
	"pm.snapshot":    "  memory snapshot at the OOM: %[1]s (torchmem snapshot summary FILE)",
	"pm.no_snapshot": "  no memory snapshot at the OOM: %[1]s",
}
