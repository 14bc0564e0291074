package cgroup

// Key-value files: v2 memory.events and v1 memory.oom_control:
//
//	low 0
//	high 0
//	max 35
//	oom 1
//	oom_kill 1
//	oom_group_kill 0
//
//	oom_kill_disable 0
//	under_oom 0
//	oom_kill 1

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Events counts how often the group hit its limits. Counters the kernel
// does not keep for this version are nil.
type Events struct {
	// Source names the files the counters came from.
	Source string `json:"source"`
	// Low, High, Max: times usage went under low / over high / hit max (v2).
	// On v1, Max is memory.failcnt (times a charge failed at the limit).
	Low  *uint64 `json:"low,omitempty"`
	High *uint64 `json:"high,omitempty"`
	Max  *uint64 `json:"max,omitempty"`
	// OOM: times the group ran out of memory (v2). OOMKill: processes the
	// OOM killer killed in the group (v2; v1 from kernel 4.13).
	OOM          *uint64 `json:"oom,omitempty"`
	OOMKill      *uint64 `json:"oom_kill,omitempty"`
	OOMGroupKill *uint64 `json:"oom_group_kill,omitempty"`
	// UnderOOM and OOMKillDisable are v1's memory.oom_control flags.
	UnderOOM       *bool `json:"under_oom,omitempty"`
	OOMKillDisable *bool `json:"oom_kill_disable,omitempty"`
}

// UnmarshalJSON reads Events as encoding/json writes them, and also
// under_oom as the number 0 or 1: run summaries stored before the job
// cgroup shared this type hold it so (internal/jobcgroup had its own int64
// copy of these counters), and `torchmem show` still decodes them.
func (e *Events) UnmarshalJSON(b []byte) error {
	type plain Events
	aux := struct {
		*plain
		UnderOOM json.RawMessage `json:"under_oom,omitempty"`
	}{plain: (*plain)(e)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	e.UnderOOM = nil
	switch s := string(aux.UnderOOM); s {
	case "", "null":
	case "0", "1", "false", "true":
		v := s == "1" || s == "true"
		e.UnderOOM = &v
	default:
		return fmt.Errorf("under_oom: %s is not a flag", s)
	}
	return nil
}

// parseKeyValues parses "key value" lines into counters.
func parseKeyValues(s string) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("line %q: want \"key value\"", line)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %q: bad number", line)
		}
		out[k] = n
	}
	return out, sc.Err()
}

func ptr(kv map[string]uint64, k string) *uint64 {
	if v, ok := kv[k]; ok {
		return &v
	}
	return nil
}

func flag(kv map[string]uint64, k string) *bool {
	if v, ok := kv[k]; ok {
		b := v != 0
		return &b
	}
	return nil
}

// eventsV2 maps memory.events counters.
func eventsV2(kv map[string]uint64) Events {
	return Events{
		Source: "memory.events",
		Low:    ptr(kv, "low"), High: ptr(kv, "high"), Max: ptr(kv, "max"),
		OOM: ptr(kv, "oom"), OOMKill: ptr(kv, "oom_kill"), OOMGroupKill: ptr(kv, "oom_group_kill"),
	}
}

// eventsV1 maps memory.oom_control and memory.failcnt.
func eventsV1(oomControl map[string]uint64, failcnt *uint64) Events {
	return Events{
		Source:         "memory.oom_control+memory.failcnt",
		Max:            failcnt,
		OOMKill:        ptr(oomControl, "oom_kill"),
		UnderOOM:       flag(oomControl, "under_oom"),
		OOMKillDisable: flag(oomControl, "oom_kill_disable"),
	}
}
