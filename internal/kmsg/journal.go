package kmsg

// journalctl -o json, one object per line:
//
//	{"__REALTIME_TIMESTAMP":"1764455502413325","_SOURCE_MONOTONIC_TIMESTAMP":"31413325",
//	 "_HOSTNAME":"gpu1","SYSLOG_IDENTIFIER":"kernel","PRIORITY":"3",
//	 "MESSAGE":"Memory cgroup out of memory: Killed process 506 (python3) ..."}
//
// MESSAGE is an array of byte values when it is not valid UTF-8.

import (
	"encoding/json"
	"strconv"
	"time"
)

type journalEntry struct {
	Message    json.RawMessage `json:"MESSAGE"`
	Realtime   string          `json:"__REALTIME_TIMESTAMP"`
	SourceMono string          `json:"_SOURCE_MONOTONIC_TIMESTAMP"`
	Mono       string          `json:"__MONOTONIC_TIMESTAMP"`
	Hostname   string          `json:"_HOSTNAME"`
	Ident      string          `json:"SYSLOG_IDENTIFIER"`
	Transport  string          `json:"_TRANSPORT"`
	Priority   string          `json:"PRIORITY"`
	PID        string          `json:"_PID"`
}

// parseJournalJSON parses one journalctl -o json line.
func parseJournalJSON(b []byte, ln *Line, _ *ParseOptions) ([]byte, bool) {
	var e journalEntry
	if err := json.Unmarshal(b, &e); err != nil || len(e.Message) == 0 {
		return b, false
	}
	ln.Text = journalMessage(e.Message)
	if us, err := strconv.ParseInt(e.Realtime, 10, 64); err == nil {
		ln.Wall = time.UnixMicro(us)
	}
	mono := e.SourceMono
	if mono == "" && e.Transport == "kernel" {
		mono = e.Mono
	}
	if us, err := strconv.ParseInt(mono, 10, 64); err == nil {
		ln.Uptime, ln.HasUptime = time.Duration(us)*time.Microsecond, true
	}
	ln.Host, ln.Ident = e.Hostname, e.Ident
	if ln.Ident == "" && e.Transport == "kernel" {
		ln.Ident = "kernel"
	}
	if p, err := strconv.Atoi(e.Priority); err == nil {
		ln.Priority = p
	}
	ln.PID, _ = strconv.Atoi(e.PID)
	return nil, true
}

func journalMessage(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []byte
	var ints []int
	if json.Unmarshal(raw, &ints) == nil {
		bs = make([]byte, 0, len(ints))
		for _, v := range ints {
			bs = append(bs, byte(v))
		}
	}
	return string(bs)
}
