package oomexplain

import (
	"strconv"
	"strings"
)

// anchors: a line holding none of these cannot start any incident, so it
// is skipped without further parsing while no incident is open. This is
// what makes a 1 GB log parse at disk speed. They are chosen to start with
// byte pairs that are rare in ordinary text ("mory", not "emory").
var anchors = []string{
	"oom", "OOM", "mory", "Killed", "killed", "Kill process",
	"xitcode", "FailedError", "files (24)", "Too many open", "cdata", "CUBLAS_STATUS_ALLOC",
	"xceeded", "Signal 9", "bus error", "Bus error", "</torch_", "Mem-Info", "Free swap", "DataLoader worker",
	"SIGKILL", "SIGBUS", "job step ", "*** JOB ", "*** STEP ", "xitCode", "xit Code",
	"mm_fault", "page_fault",
	`:\`, `\site-packages\`, // Windows paths in a traceback (hostParser.windows)
}

// anchorAt maps a byte pair to 1 + the index of the anchors starting with
// it in anchorGroups; one table lookup per byte replaces a search per
// anchor (490 ns -> 60 ns for a 100-byte line, see bench/results/oom.md).
var anchorAt, anchorGroups = func() (*[1 << 16]uint8, [][]string) {
	var t [1 << 16]uint8
	var groups [][]string
	for _, a := range anchors {
		k := int(a[0])<<8 | int(a[1])
		if t[k] == 0 {
			groups = append(groups, nil)
			t[k] = uint8(len(groups))
		}
		groups[t[k]-1] = append(groups[t[k]-1], a)
	}
	return &t, groups
}()

func interesting(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	t := anchorAt
	prev := uint16(b[0])
	for i, c := range b[1:] { // i is where the pair (prev, c) starts
		k := prev<<8 | uint16(c)
		prev = uint16(c)
		if g := t[k]; g != 0 && matchAnchor(b[i:], anchorGroups[g-1]) {
			return true
		}
	}
	return false
}

func matchAnchor(b []byte, group []string) bool {
	for _, a := range group {
		if len(b) >= len(a) && string(b[:len(a)]) == a {
			return true
		}
	}
	return false
}

// stripRankPrefixes removes the prefixes launchers put before each line:
// "[rank3]:" (PyTorch >= 2.2 distributed exceptions), "[default3]:"
// (torchrun --tee with its default log prefix), "3: " (srun --label) and
// "node1: " (pdsh/clush), "[1,3]<stderr>:" (mpirun --tag-output). Up to three may stack ("node1: [rank3]: ...").
func stripRankPrefixes(s string) (string, *int, string) {
	var rank *int
	host := ""
	for i := 0; i < 3; i++ {
		// intPtr, not &r: r would be moved to the heap on every call,
		// for every line of a training log.
		if r, rest, ok := bracketRank(s); ok {
			rank, s = intPtr(r), rest
			continue
		}
		if r, rest, ok := mpiTag(s); ok {
			rank, s = intPtr(r), rest
			continue
		}
		if r, rest, ok := labelRank(s); ok {
			rank, s = intPtr(r), rest
			continue
		}
		if h, rest, ok := hostLabel(s); ok && host == "" {
			host, s = h, rest
			continue
		}
		break
	}
	return s, rank, host
}

func bracketRank(s string) (int, string, bool) {
	if len(s) < 4 || s[0] != '[' {
		return 0, s, false
	}
	end := strings.Index(s[:min(len(s), 26)], "]:")
	if end < 2 || end > 24 {
		return 0, s, false
	}
	inner := strings.TrimLeft(s[1:end], "abcdefghijklmnopqrstuvwxyz_ ")
	n, err := strconv.Atoi(inner)
	if err != nil || inner == s[1:end] {
		return 0, s, false
	}
	return n, strings.TrimPrefix(s[end+2:], " "), true
}

func labelRank(s string) (int, string, bool) {
	i := 0
	for i < len(s) && i < 6 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(s) || s[i] != ':' || s[i+1] != ' ' {
		return 0, s, false
	}
	n, _ := strconv.Atoi(s[:i])
	return n, s[i+2:], true
}

// hostLabel accepts "name: " where name looks like a host: lower-case
// letters, digits, '-' and '.', with at least one digit or '-' (so
// "slurmstepd: ", "RuntimeError: " and Python logger names like
// "torch.distributed.elastic.agent: " are not taken for hosts).
func hostLabel(s string) (string, string, bool) {
	c := strings.Index(s[:min(len(s), 66)], ": ") // a longer name is no host's
	if c < 2 || c > 64 {
		return "", s, false
	}
	name, marked := s[:c], false
	for j := 0; j < len(name); j++ {
		ch := name[j]
		switch {
		case ch >= 'a' && ch <= 'z':
		case ch >= '0' && ch <= '9', ch == '-':
			marked = true
		case ch == '.': // allowed, but "torch.distributed.api: " is a logger
		default:
			return "", s, false
		}
	}
	if !marked || name[0] < 'a' || name[0] > 'z' || strings.HasPrefix(s[c+2:], " ") {
		return "", s, false
	}
	return name, s[c+2:], true
}

// stripANSI removes terminal colour sequences (ESC [ ... letter).
func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < '@' || s[j] > '~') {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mpiTag reads Open MPI's --tag-output prefix "[jobid,rank]<stderr>:".
func mpiTag(s string) (int, string, bool) {
	if len(s) < 8 || s[0] != '[' {
		return 0, s, false
	}
	end := strings.Index(s[:min(len(s), 26)], "]<")
	if end < 3 || end > 24 {
		return 0, s, false
	}
	_, r, ok := strings.Cut(s[1:end], ",")
	n, err := strconv.Atoi(r)
	close := strings.Index(s[end:], ">:")
	if !ok || err != nil || close < 0 {
		return 0, s, false
	}
	return n, s[end+close+2:], true
}
