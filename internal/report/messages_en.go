package report

import (
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// catalog is the report page's text; the post-mortem's verdicts,
// recommendations and notes are stored localized by the run
// (internal/oomexplain) and shown as they are.
var catalog = i18n.NewCatalog("report", map[language.Tag]map[string]string{i18n.EN: messagesEN, i18n.ZH: messagesZH})

// hasMessage reports whether id is in the catalog.
func hasMessage(id string) bool {
	_, ok := messagesEN[id]
	return ok
}

var messagesEN = map[string]string{
	"page.title":   "torchmem run %[1]s",
	"page.h1":      "torchmem run %[1]s — %[2]s",
	"page.started": "started %[1]s, ran %[2]s",
	"page.host":    ", host %[1]s",
	"page.cwd":     ", in %[1]s",
	"page.footer":  "Made by torchmem; charts by uPlot %[1]s (MIT), inlined.",

	"status.running":         "running",
	"status.exited":          "exited",
	"status.killed":          "killed",
	"status.oom-killed":      "oom-killed",
	"status.stopped":         "stopped",
	"status.supervisor_lost": "supervisor lost",

	"h.postmortem":   "Post-mortem",
	"h.change":       "What to change",
	"h.explanation":  "Explanation",
	"h.copy_on_read": "DataLoader workers: copy-on-read",
	"h.evidence":     "Evidence",
	"h.exception":    "Exception",
	"h.kernel":       "Kernel log",
	"h.peaks":        "Peaks",
	"h.charts":       "Memory over time",
	"h.events":       "Events",

	"pm.exit":    "(exit status %[1]d)",
	"pm.or":      "or",
	"pm.orphans": "%[1]d process(es) left behind by the job were killed at the end.",
	"pm.none":    "No post-mortem: the run is %[1]s.",

	"cor.text":          "%[1]d of %[2]d workers measured copied the dataset on read (written private memory, smaps_rollup Private_Dirty; the parent's anonymous RSS from /proc/PID/status).",
	"cor.pid":           "worker pid",
	"cor.parent":        "parent pid",
	"cor.first":         "private first",
	"cor.last":          "private last",
	"cor.growth":        "growth",
	"cor.parent_growth": "parent growth",
	"cor.over":          "over",
	"cor.copying":       "copying",
	"yes":               "yes",
	"no":                "no",

	"ev.time":    "time",
	"ev.kind":    "kind",
	"ev.source":  "source",
	"ev.pid":     "pid",
	"ev.message": "message",

	"chart.host":       "Job host memory",
	"chart.available":  "Host memory available (meminfo)",
	"chart.gpu":        "GPU memory",
	"chart.allocator":  "PyTorch allocator (hook)",
	"chart.step_peaks": "Per-step peaks (hook, measured)",
	"chart.step_time":  "Step time (hook)",
	"rank.rank":        "rank %[1]s",
	"rank.pid":         "pid %[1]s",
	"charts.none":      "No samples were stored for this run.",
	"charts.markers":   "Markers:",
	"charts.time":      "Time",

	"note.pss_above_cgroup": "PSS is above cgroup usage: PSS counts every shared page (/dev/shm, shared libraries' file pages) in proportion to its sharers, while the cgroup is charged a shared page only if it touched it first, and page cache the job reads may be charged to another cgroup.",
}
