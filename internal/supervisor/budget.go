package supervisor

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/torchmem/torchmem/internal/i18n"
)

// What a run keeps of what the job can make it record. The hook server
// bounds each message and each type's rate (hook.Budget); these bound
// the totals, so a job that floods for hours still leaves a supervisor of
// a fixed size and a history of at most ~10 MB of events.
const (
	maxRunEvents     = 10000   // events stored per run (the exit event and the budget notice always are)
	maxRunEventBytes = 8 << 20 // bytes of event messages and data stored per run
	maxRunSteps      = 1000000 // step rows per run (~14 h of 20 Hz steps)
	maxKept          = 64      // exceptions and OOMs kept for the post-mortem: the first and last 32
	maxNotices       = 64      // distinct hook notices shown
)

// runBudget counts what was stored and what was dropped.
type runBudget struct {
	events, eventBytes, steps int
	dropped                   map[string]int64 // by what: "event", "step", "notice"
	droppedBytes              int64
}

// takeEvent spends the budget on an event of size bytes; false: drop it.
func (b *runBudget) takeEvent(size int) bool {
	if b.events >= maxRunEvents || b.eventBytes+size > maxRunEventBytes {
		b.drop("event")
		b.droppedBytes += int64(size)
		return false
	}
	b.events++
	b.eventBytes += size
	return true
}

func (b *runBudget) takeStep() bool {
	if b.steps >= maxRunSteps {
		b.drop("step")
		return false
	}
	b.steps++
	return true
}

func (b *runBudget) drop(what string) {
	if b.dropped == nil {
		b.dropped = map[string]int64{}
	}
	b.dropped[what]++
}

// keepEnds appends x to list, keeping at most max: the first max/2 and the
// latest after them (the first exception often explains the rest; the
// last is the one that ended the run).
func keepEnds[T any](list []T, x T, max int) []T {
	if len(list) < max {
		return append(list, x)
	}
	half := max / 2
	copy(list[half:], list[half+1:])
	list[len(list)-1] = x
	return list
}

// budgetNotice says what the job sent over the budget, "" when nothing:
// hookDropped and truncated come from the hook server, the rest from b.
// The event keeps the English; the notice is in the run's language.
func budgetNotice(hookDropped map[string]int64, truncated int64, b runBudget) string {
	return budgetNoticeIn(tr(i18n.EN), hookDropped, truncated, b)
}

func budgetNoticeIn(t func(string, ...any) string, hookDropped map[string]int64, truncated int64, b runBudget) string {
	var parts []string
	if n := sum(hookDropped); n > 0 {
		parts = append(parts, t("budget.rate", n, byKind(hookDropped)))
	}
	if truncated > 0 {
		parts = append(parts, t("budget.cut", truncated))
	}
	if n := b.dropped["event"]; n > 0 {
		parts = append(parts, t("budget.events", n, b.droppedBytes, maxRunEvents, maxRunEventBytes>>20))
	}
	if n := b.dropped["step"]; n > 0 {
		parts = append(parts, t("budget.steps", n, maxRunSteps))
	}
	if n := b.dropped["notice"]; n > 0 {
		parts = append(parts, t("budget.notices", n, maxNotices))
	}
	if len(parts) == 0 {
		return ""
	}
	return t("budget.dropped", strings.Join(parts, t("budget.sep")))
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func byKind(m map[string]int64) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}

// recordBudget stores one event (and prints one notice) saying how much
// the job sent over its budget; nothing when it kept within it.
func (s *sup) recordBudget() {
	var hd map[string]int64
	var cut int64
	if s.srv != nil {
		hd, cut = s.srv.OverBudget()
	}
	msg := budgetNotice(hd, cut, s.budget)
	if msg == "" {
		return
	}
	s.notice(budgetNoticeIn(tr(s.lang()), hd, cut, s.budget))
	data := map[string]any{"hook_dropped": hd, "hook_truncated": cut, "dropped": s.budget.dropped, "dropped_event_bytes": s.budget.droppedBytes}
	s.storeEvent(s.now(), "budget", "supervisor", 0, msg, data)
}
