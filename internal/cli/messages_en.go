package cli

// cliMessagesEN is the English of every cliCatalog id (messages.go).
var cliMessagesEN = map[string]string{
	// tune (tune.go, tune_format.go).
	"tune.plan.header":       "torchmem tune plan: profile %[1]s",
	"tune.plan.persisted_by": " (THP persisted by %[1]s)",
	"tune.plan.columns":      "SETTING\tNOW\tTARGET\tACTION\tPERSISTED IN / NOTE",
	"tune.action.set":        "set",
	"tune.action.keep":       "keep",
	"tune.action.skip":       "skip",
	"tune.action.advice":     "advice",
	"tune.plan.shm_advice":   "\nadvice (%[1]s): /dev/shm is small: %[2]s. torchmem never remounts it. For a host: add 'tmpfs /dev/shm tmpfs defaults,size=50%% 0 0' to /etc/fstab and run mount -o remount /dev/shm when no job runs; for containers: --shm-size=16g or --ipc=host.\n",
	"tune.plan.link":         "\nlink %[1]s -> %[2]s\n",
	"tune.plan.write":        "\nwrite %[1]s:\n",
	"tune.plan.run":          "\nrun (on this host only): %[1]s\n",
	"tune.status.none":       "nothing applied by torchmem tune",
	"tune.status.applied":    "applied",
	"tune.status.incomplete": "INCOMPLETE (an apply was interrupted: run torchmem tune revert)",
	"tune.status.header":     "profile %[1]s %[2]s at %[3]s (journal %[4]s)\n",
	"tune.status.live":       "LIVE VALUE\tTARGET\tNOW\tSTATE",
	"tune.status.files":      "FILE\tSTATE",
	"tune.status.drifted":    "DRIFTED: %[1]s",
	"tune.status.ok":         "ok",
	"tune.apply.applied":     "applied",
	"tune.apply.dry_run":     "dry run: would apply",
	"tune.apply.done":        "\n%[1]s profile %[2]s (%[3]d live values, %[4]d files); journal %[5]s; undo with: torchmem tune revert\n",
	"tune.apply.confirm":     "\nApply these changes? [y/N] ",
	"tune.apply.nothing":     "nothing changed",
}
