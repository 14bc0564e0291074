package cli

import (
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// snapshotCatalog renders the human output of `torchmem snapshot summary`,
// top, timeline, leaks and diff (--json, --csv and --pytorch never go
// through it). Sizes come pre-formatted (units.Bytes) so both languages
// show the same numbers; the names PyTorch uses (segment, block, pool,
// the trace's actions, categories) stay as PyTorch writes them.
var snapshotCatalog = i18n.NewCatalog("snapshot", map[language.Tag]map[string]string{
	i18n.EN: snapshotEN,
	i18n.ZH: snapshotZH,
})

// snapshotTr is the snapshot printer of env's language.
func snapshotTr(env *Env) translate {
	t := snapshotCatalog.T(env.lang())
	return func(id string, args ...any) string { return t(id, i18n.Plain(args)...) }
}

var snapshotEN = map[string]string{
	"snap.no_trace":        "no trace in this snapshot: record one with torch.cuda.memory._record_memory_history()",
	"snap.none":            "none",
	"snap.no_stack":        "<no stack recorded>",
	"leaks.src_annotation": "annotation %[1]s",
	"leaks.src_sizes":      "repeated sizes",
	"snap.reading":         "reading snapshot",
	"snap.html_wrote":      "wrote %[1]s (%[2]d bytes: %[3]d timeline points, %[4]d blocks, %[5]d stacks)",

	// summary
	"sum.title":          "torchmem summary (snapshot format %[1]s)",
	"sum.no_trace":       "\ntrace: none recorded (enable torch.cuda.memory._record_memory_history before the run)",
	"sum.settings":       "\nallocator settings:",
	"sum.annotations":    "external annotations: %[1]d",
	"sum.device":         "\ndevice %[1]d: %[2]d segments",
	"sum.reserved":       "reserved",
	"sum.allocated":      "allocated",
	"sum.allocated_more": "(active %[1]s, requested %[2]s)",
	"sum.free":           "free",
	"sum.free_int":       "free, internal",
	"sum.free_int_why":   "(rounding of block sizes)",
	"sum.free_ext":       "free, external",
	"sum.free_ext_why":   "(fragmentation: inactive blocks)",
	"sum.largest":        "largest free block",
	"sum.pools":          "segments by pool",
	"sum.pools_value":    "%[1]s; expandable %[2]d",
	"sum.blocks":         "blocks",
	"sum.no_times":       "no times recorded",
	"sum.over":           "over %[1]s s",
	"sum.entry":          "entry %[1]d",
	"sum.at_entry":       "%[1]s (entry %[2]d)",
	"sum.trace":          "\ntrace of device %[1]d: %[2]d entries %[3]s",
	"sum.actions":        "actions",
	"sum.start":          "at trace start",
	"sum.start_value":    "allocated %[1]s, reserved %[2]s",
	"sum.peak_alloc":     "peak allocated",
	"sum.peak_alloc_at":  "%[1]s at %[2]s; reserved then %[3]s",
	"sum.peak_rsv":       "peak reserved",
	"sum.peak_rsv_at":    "%[1]s at %[2]s",
	"sum.oom_events":     "OOM events",
	"sum.oom":            "OOM",
	"sum.oom_value":      "%[1]s: %[2]s requested, %[3]s free",
	"sum.trace_note":     "  (trace sizes are as requested; PyTorch rounds blocks up to 512 bytes)",

	// top
	"top.at_snapshot":   "at the snapshot, device %[1]d: %[2]s held by active blocks",
	"top.at_peak":       "at the peak of allocated memory",
	"top.at_moment":     "at %[1]s",
	"top.moment_line":   "%[1]s, device %[2]d: %[3]s requested at trace entry %[4]d",
	"top.no_trace":      "\n(no trace recorded: no view at the peak)",
	"top.col.bytes":     "BYTES",
	"top.col.share":     "SHARE",
	"top.col.count":     "COUNT",
	"top.col.site":      "SITE",
	"top.col.library":   "LIBRARY FRAME",
	"top.col.module":    "MODULE",
	"top.col.file":      "FILE",
	"top.col.category":  "CATEGORY",
	"top.col.user_line": "USER LINE",
	"top.col.via":       "VIA",
	"top.more_rows":     "%[1]d more rows",
	"top.by_category":   "  by category and the phase it was allocated in:",
	"top.col.forward":   "FORWARD",
	"top.col.backward":  "BACKWARD",
	"top.col.optimizer": "OPTIMIZER",
	"top.col.other":     "OTHER",
	"top.col.conf":      "CONFIDENCE",
	"top.total":         "total",

	// timeline
	"tl.no_times":   "no times recorded",
	"tl.header":     "device %[1]d: %[2]d trace entries, %[3]s (scale: full height = %[4]s)",
	"tl.allocated":  "allocated",
	"tl.reserved":   "reserved",
	"tl.markers":    "markers",
	"tl.peaks":      "  peak allocated %[1]s at entry %[2]d, peak reserved %[3]s",
	"tl.legend":     "  ^ = start of %[1]s",
	"tl.oom_marker": "  ! entry %[1]d: %[2]s",

	// leaks
	"leaks.none":       "no accumulating allocations found",
	"leaks.header":     "allocations alive at the end that grew step after step\n(steps from %[1]s):",
	"leaks.col.growth": "GROWTH/STEP",
	"leaks.col.steps":  "STEPS",
	"leaks.col.alive":  "ALIVE",
	"leaks.col.device": "DEVICE",

	// diff
	"diff.device":     "device %[1]d:",
	"diff.reserved":   "reserved",
	"diff.allocated":  "allocated",
	"diff.change":     "%[1]s -> %[2]s (%[3]s)",
	"diff.col.delta":  "DELTA",
	"diff.col.before": "BEFORE",
	"diff.col.after":  "AFTER",
	"diff.more":       "more sites (--limit 0 for all)",
	"diff.no_change":  "  (no site changed)",
}
