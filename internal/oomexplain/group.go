package oomexplain

// Group folds repeats: the same CUDA OOM printed by 8 ranks, the same
// exception from a retry loop, one kernel report pasted twice (dmesg and
// syslog):
//
//	[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.40 GiB. GPU 0 has ...
//	[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.40 GiB. GPU 0 has ...

import (
	"fmt"
	"slices"
	"strings"
)

// Group returns incs with incidents that repeat an earlier one folded into
// it: Count is the sum, Ranks lists the distinct ranks when they differ,
// the first occurrence's place and fields are kept. Incidents repeat when
// kind, host and the figures that identify them are the same: a kernel
// kill's victim (kills of different pids are never grouped), constraint,
// cgroups and memcg counters; a GPU error's device and whole message (numbers included);
// a host failure's pids and message. Ranks may differ, hosts may not. It
// does not modify incs. Call it before Correlate: Related indexes and
// explanations of the input are dropped.
func Group(incs []Incident) []Incident {
	out := make([]Incident, 0, len(incs))
	first := map[string]int{}
	for _, inc := range incs {
		inc.Related, inc.Explanation = nil, nil
		key := groupKey(&inc)
		i, seen := first[key]
		if !seen {
			first[key] = len(out)
			inc.Ranks = addRank(slices.Clone(inc.Ranks), inc.Rank)
			out = append(out, inc)
			continue
		}
		g := &out[i]
		g.Count += max(inc.Count, 1)
		g.Ranks = addRank(g.Ranks, inc.Rank)
	}
	for i := range out {
		if len(out[i].Ranks) < 2 {
			out[i].Ranks = nil // one rank: Rank says it
		}
	}
	return out
}

func addRank(ranks []int, r *int) []int {
	if r != nil && !slices.Contains(ranks, *r) {
		ranks = append(ranks, *r)
		slices.Sort(ranks)
	}
	return ranks
}

// groupKey names what makes an incident the same as another.
func groupKey(inc *Incident) string {
	head := fmt.Sprintf("%s|%s|%v", inc.Kind, inc.Host, inc.PIDs)
	switch {
	case inc.Kernel != nil:
		ko := inc.Kernel
		victim := -1
		if ko.Victim != nil {
			victim = ko.Victim.PID
		} else if ko.Selected != nil {
			victim = ko.Selected.PID
		}
		trigger := ""
		if ko.Trigger != nil {
			trigger = ko.Trigger.Comm
		}
		counters := ""
		if ko.Memcg != nil {
			counters = fmt.Sprint(*ko.Memcg) // failcnt differs between two hits of one limit
		}
		return fmt.Sprintf("%s|%d|%s|%s|%s|%s|%s|%s", head, victim, ko.Constraint, ko.OOMMemcg, ko.TaskMemcg, ko.MemcgStatsPath, counters, trigger)
	case inc.CUDA != nil:
		dev := -1
		if inc.CUDA.Device != nil {
			dev = *inc.CUDA.Device
		}
		// The class is part of the error: a message raised as an exception
		// and the same text reported bare by a handler that went on are two
		// failures (cuda.go, repeatOf).
		return fmt.Sprintf("%s|%d|%s|%s", head, dev, inc.CUDA.Exception, inc.CUDA.Message)
	case inc.Failure != nil:
		return head + "|" + messageCore(inc.Failure.Message)
	}
	return fmt.Sprintf("%s|%s|%d", head, inc.Source, inc.Line) // nothing to compare: never grouped
}

// messageAnchors start the messages host failures are recognised by.
var messageAnchors = []string{"ERROR:", "RuntimeError:", "DataLoader worker", "unable to ", "Killed", "slurmstepd", "systemd-oomd"}

// messageCore drops what a progress bar or a prompt glued before the
// message (tqdm redraws with \r, and a lost newline joins them), so the
// same failure printed twice is one incident.
func messageCore(m string) string {
	best := -1
	for _, a := range messageAnchors {
		if i := strings.Index(m, a); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best > 0 {
		return m[best:]
	}
	return m
}
