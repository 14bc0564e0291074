package oomexplain

import (
	"strconv"
	"strings"
)

// parseVictim: "[Memory cgroup out of memory: |Out of memory: ]Killed
// process 19335 (python3) total-vm:321156kB, anon-rss:102016kB,
// file-rss:2592kB, shmem-rss:0kB, UID:0 pgtables:260kB oom_score_adj:0".
// 2.6/3.x: "Killed process 1234, UID 0, (python) total-vm:...".
// It reports whether the line named a victim.
func parseVictim(ko *KernelOOM, text string) bool {
	at := killedAt(text)
	if at < 0 {
		return false
	}
	memcgWording(ko, text[:at])
	v, ok := killedProcess(text[at:])
	if ok {
		ko.Victim = v
	}
	return ok
}

// memcgWording reads the words before the pid of a selection or kill
// line: "Memory cgroup out of memory: " (at the line's start, or with the
// line quoted inside another message, a Kubernetes node-problem-detector
// Event's "message", corpus kernel/060) infers CONSTRAINT_MEMCG; the
// global "Out of memory: " marks GlobalWording.
func memcgWording(ko *KernelOOM, head string) {
	switch {
	case strings.Contains(head, "Memory cgroup out of memory"):
		inferConstraint(ko, "CONSTRAINT_MEMCG", "Memory cgroup out of memory")
	case strings.Contains(head, "Out of memory"):
		ko.GlobalWording = true
	}
}

// killedAt returns where the kill line's "N (comm) total-vm:" starts, -1
// when text is no kill line. The fields identify it whatever its verb: a
// paste run through a translation tool reads "Out of memory: Process
// stopped 2953 (python) total-vm:8142876kB, anon-rss:..." (corpus
// kernel/056). Only the kill line prints "(comm) total-vm:" (the
// oom_reaper's line has "(comm), now anon-rss:").
func killedAt(text string) int {
	if i := strings.Index(text, "Killed process "); i >= 0 {
		return i + len("Killed process ")
	}
	tv := strings.Index(text, ") total-vm:")
	if tv < 0 {
		return -1
	}
	open := strings.LastIndex(text[:tv], " (")
	if open < 0 {
		return -1
	}
	sp := strings.LastIndexByte(text[:open], ' ') + 1
	if !isDigits(text[sp:open]) {
		return -1
	}
	return sp
}

// killedProcess parses "19335 (python3) total-vm:321156kB, anon-rss:...":
// the kill line and the oom_reaper's line print the same fields.
func killedProcess(s string) (*Victim, bool) {
	pid, comm, rest, ok := pidComm(s)
	if !ok {
		return nil, false
	}
	v := &Victim{PID: pid, Comm: comm}
	rest = dropDigitCommas(rest)
	for _, f := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' }) {
		key, val, ok := strings.Cut(f, ":")
		if !ok {
			continue
		}
		switch key {
		case "total-vm":
			v.TotalVMBytes = kbPtr(val)
		case "anon-rss":
			v.AnonRSSBytes = kbPtr(val)
		case "file-rss":
			v.FileRSSBytes = kbPtr(val)
		case "shmem-rss":
			v.ShmemRSSBytes = kbPtr(val)
		case "pgtables":
			v.PgTablesBytes = kbPtr(val)
		case "UID":
			v.UID = atoiPtr(val)
		case "oom_score_adj":
			v.OOMScoreAdj = atoiPtr(val)
		}
	}
	return v, true
}

// dropDigitCommas removes commas between digits: a paste run through a
// number formatter prints "total-vm:26,184,840kB, anon-rss:153,700,88kB"
// (corpus kernel/019, host/043; the separators may even be misplaced).
// The kernel itself never puts a comma inside a number, only after a
// field (", anon-rss:"), so the digits read without them are its own.
func dropDigitCommas(s string) string {
	if !strings.Contains(s, ",") {
		return s
	}
	b := []byte(s)
	out := b[:0]
	for i, c := range b {
		if c == ',' && i > 0 && i+1 < len(b) && isDigit(b[i-1]) && isDigit(b[i+1]) {
			continue
		}
		out = append(out, c)
	}
	return string(out)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// pidComm parses "19335 (python3) rest" (also "1234, UID 0, (python) rest").
// comm is at most 16 bytes but may hold spaces and parentheses, so the
// closing one is the last ')' before the rest's first ':'.
func pidComm(s string) (int, string, string, bool) {
	sp := strings.IndexAny(s, " ,")
	if sp < 1 {
		return 0, "", "", false
	}
	pid, err := strconv.Atoi(s[:sp])
	if err != nil {
		return 0, "", "", false
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		return pid, "", s[sp:], true
	}
	tail := s[open+1:]
	limit := len(tail)
	if c := strings.IndexByte(tail, ':'); c >= 0 {
		limit = c
	}
	closeAt := strings.LastIndexByte(tail[:limit], ')')
	if closeAt < 0 {
		return pid, strings.TrimSpace(tail[:min(len(tail), 16)]), "", true
	}
	return pid, tail[:closeAt], tail[closeAt+1:], true
}

func kbPtr(s string) *int64 {
	n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(s), "kB"), 10, 64)
	if err != nil {
		return nil
	}
	return i64Ptr(kb(n))
}

// parseSelected: "[Memory cgroup out of memory: |Out of memory: ]Kill
// process 1234 (python) score 1000 or sacrifice child" (< 5.0).
func parseSelected(ko *KernelOOM, text string) {
	i := strings.Index(text, "Kill process ")
	if i < 0 {
		return
	}
	memcgWording(ko, text[:i])
	pid, comm, rest, ok := pidComm(text[i+len("Kill process "):])
	if !ok {
		return
	}
	s := &Selected{PID: pid, Comm: comm}
	if f := strings.Fields(rest); len(f) >= 2 && f[0] == "score" {
		s.Score = atoiPtr(f[1])
	}
	ko.Selected = s
}

// gluedSelection returns the selection line that a kill line was glued
// to when a paste lost the newline between them, without a timestamp to
// split on ("Out of memory: Kill process 5372 (mongod) score 130 or
// sacrifice child Killed process 5372 (mongod), UID 0, ...", corpus
// kernel/058). The kernel prints them as two records, the selection first.
func gluedSelection(text string) (string, bool) {
	const tail = " or sacrifice child"
	i := strings.Index(text, tail)
	if i < 0 || i > killedAt(text) {
		return "", false
	}
	return text[:i+len(tail)], true
}

// parseReaped: "oom_reaper: reaped process 19335 (python3), now
// anon-rss:0kB, file-rss:0kB, shmem-rss:0kB".
func parseReaped(text string) *Reaped {
	i := strings.Index(text, "reaped process ")
	v, ok := killedProcess(text[i+len("reaped process "):])
	if !ok {
		return nil
	}
	return &Reaped{PID: v.PID, Comm: v.Comm, AnonRSSBytes: v.AnonRSSBytes, FileRSSBytes: v.FileRSSBytes, ShmemRSSBytes: v.ShmemRSSBytes}
}
