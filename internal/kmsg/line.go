package kmsg

import (
	"bytes"
	"strconv"
	"time"
)

// Line is one log line with its recognised prefix removed.
type Line struct {
	// Text is the message without any prefix.
	Text string
	// Prefixed reports that a log prefix (timestamp, syslog header, kmsg
	// record header) was recognised and stripped: the line is a log record,
	// not a continuation or an unprefixed training-log line.
	Prefixed bool
	// Wall is the wall-clock time of the record; zero when the source gives
	// none (plain dmesg without a known boot time, training logs).
	Wall time.Time
	// YearAssumed: the stamp carries no year (BSD syslog, journalctl's
	// short format: "May  6 10:02:51"); Wall's year is ParseOptions.Year
	// or a guess from the current date.
	YearAssumed bool
	// Uptime is the kernel's monotonic timestamp (time since boot) when
	// HasUptime; dmesg's "[  816.907974]", /dev/kmsg's usec field.
	Uptime    time.Duration
	HasUptime bool
	// Seq is the /dev/kmsg sequence number when HasSeq.
	Seq    uint64
	HasSeq bool
	// Priority is the syslog level 0-7, or -1 when unknown.
	Priority int
	// Host and Ident come from syslog/journal headers ("node1", "kernel",
	// "systemd-oomd", "slurmstepd"); empty when the source has none.
	Host  string
	Ident string
	// PID is the logging program's pid from "ident[pid]:" or the journal;
	// 0 when unknown.
	PID int
	// Cont marks a /dev/kmsg continuation fragment (flag '+' or 'c') that
	// belongs to the previous record.
	Cont bool
}

// ParseOptions resolves timestamps that are incomplete in the text.
type ParseOptions struct {
	// Year completes BSD syslog dates ("Nov 29 22:31:42"); 0: the current
	// year, or the previous one when that would put the line in the future.
	Year int
	// Location for timestamps without a zone; nil: time.Local.
	Location *time.Location
	// BootTime, when not zero, turns uptime stamps into wall-clock times.
	// Only correct for logs of the boot it belongs to (and off by any time
	// the host spent suspended).
	BootTime time.Time
	// Now is the reference "now" for year inference; zero: time.Now().
	Now time.Time
}

func (o *ParseOptions) loc() *time.Location {
	if o.Location != nil {
		return o.Location
	}
	return time.Local
}

// ParseLine strips a recognised log prefix from b (one line, without its
// newline) and returns the message with its timestamps. It never fails: an
// unrecognised line is returned whole with Prefixed false.
func ParseLine(b []byte, opts ParseOptions) Line {
	ln := Line{Priority: -1}
	rest, ok := parsePrefix(b, &ln, &opts)
	if !ok {
		ln.Text = string(b)
		return ln
	}
	ln.Prefixed = true
	if ln.Wall.IsZero() && ln.HasUptime && !opts.BootTime.IsZero() {
		ln.Wall = opts.BootTime.Add(ln.Uptime)
	}
	if ln.Text == "" {
		ln.Text = string(rest)
	}
	return ln
}

// parsePrefix tries each known header in turn; it returns the message part.
func parsePrefix(b []byte, ln *Line, o *ParseOptions) ([]byte, bool) {
	if len(b) == 0 {
		return b, false
	}
	if b[0] == '/' { // "grep -r" output: "/var/log/messages:Nov 29 ..."
		if c := bytes.IndexByte(b, ':'); c > 0 && c < 256 && c+1 < len(b) {
			if rest, ok := parsePrefix(b[c+1:], ln, o); ok {
				return rest, true
			}
		}
		return b, false
	}
	switch {
	case b[0] == '{':
		return parseJournalJSON(b, ln, o)
	case b[0] >= '0' && b[0] <= '9':
		if rest, ok := parseKmsgRecord(b, ln); ok {
			return rest, true
		}
		if rest, ok := parseISOHeader(b, ln, o); ok {
			return rest, true
		}
		return b, false
	case b[0] == '<':
		return parseRawPriority(b, ln, o)
	case b[0] == '[':
		return parseBracket(b, ln, o)
	}
	if rest, ok := parseDmesgLevel(b, ln, o); ok {
		return rest, true
	}
	if rest, ok := parseShortFull(b, ln, o); ok {
		return rest, true
	}
	return parseSyslogHeader(b, ln, o)
}

// parseRawPriority handles dmesg -r: "<6>[  816.907974] text".
func parseRawPriority(b []byte, ln *Line, o *ParseOptions) ([]byte, bool) {
	end := bytes.IndexByte(b, '>')
	if end < 2 || end > 5 {
		return b, false
	}
	n, err := strconv.Atoi(string(b[1:end]))
	if err != nil {
		return b, false
	}
	ln.Priority = n & 7
	rest := b[end+1:]
	if len(rest) > 0 && rest[0] == '[' {
		if r, ok := parseBracket(rest, ln, o); ok {
			return r, true
		}
	}
	return rest, true
}

var dmesgLevels = []string{"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"}

// parseDmesgLevel handles dmesg -x: "kern  :info  : [  816.907974] text".
func parseDmesgLevel(b []byte, ln *Line, o *ParseOptions) ([]byte, bool) {
	c1 := bytes.IndexByte(b, ':')
	if c1 < 2 || c1 > 9 || !isLowerWord(bytes.TrimRight(b[:c1], " ")) {
		return b, false
	}
	c2 := bytes.IndexByte(b[c1+1:], ':')
	if c2 < 2 || c2 > 8 {
		return b, false
	}
	level := string(bytes.TrimSpace(b[c1+1 : c1+1+c2]))
	for i, l := range dmesgLevels {
		if l == level {
			ln.Priority = i
			rest := bytes.TrimLeft(b[c1+c2+2:], " ")
			if len(rest) > 0 && rest[0] == '[' {
				if r, ok := parseBracket(rest, ln, o); ok {
					return r, true
				}
			}
			return rest, true
		}
	}
	return b, false
}

func isLowerWord(b []byte) bool {
	for _, c := range b {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return len(b) > 0
}

// parseBracket handles "[  816.907974] text" (optionally followed by a
// journalctl short-monotonic "host kernel: ") and dmesg -T "[date] text".
func parseBracket(b []byte, ln *Line, o *ParseOptions) ([]byte, bool) {
	end := bytes.IndexByte(b, ']')
	if end < 2 || end > 64 {
		return b, false
	}
	inner := b[1:end]
	rest := b[end+1:]
	if len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	if d, ok := parseUptime(inner); ok {
		ln.Uptime, ln.HasUptime = d, true
		rest = stripCaller(rest)
		if r, ok := stripKernelIdent(rest, ln); ok {
			rest = r
		}
		return rest, true
	}
	if t, ok := parseCtime(inner, o.loc()); ok {
		ln.Wall = t
		return rest, true
	}
	if t, ok := parseDateTime(inner, o.loc()); ok { // Python logging: "[2024-03-26 16:50:50,221]"
		ln.Wall = t
		return rest, true
	}
	if isReltime(inner) {
		return rest, true
	}
	return b, false
}

// parseUptime parses "  816.907974" (seconds since boot).
func parseUptime(b []byte) (time.Duration, bool) {
	b = bytes.TrimLeft(b, " ")
	dot := bytes.IndexByte(b, '.')
	if dot < 1 || dot == len(b)-1 {
		return 0, false
	}
	var sec, frac int64
	for _, c := range b[:dot] {
		if c < '0' || c > '9' {
			return 0, false
		}
		sec = sec*10 + int64(c-'0')
		if sec > 1e10 {
			return 0, false
		}
	}
	scale := int64(1e9)
	for _, c := range b[dot+1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		if scale > 1 {
			scale /= 10
			frac += int64(c-'0') * scale
		}
	}
	return time.Duration(sec)*time.Second + time.Duration(frac), true
}

// isReltime matches dmesg -e/--reltime stamps: "[  +0.000010]", "[Nov29 22:31]".
func isReltime(b []byte) bool {
	t := bytes.TrimSpace(b)
	if len(t) > 1 && (t[0] == '+' || t[0] == '-') {
		_, ok := parseUptime(t[1:])
		return ok
	}
	return len(t) >= 11 && len(t) <= 14 && t[len(t)-3] == ':' && bytes.IndexByte(t, ' ') > 0
}

// stripKernelIdent removes journalctl short-monotonic's "host kernel: ".
func stripKernelIdent(b []byte, ln *Line) ([]byte, bool) {
	sp := bytes.IndexByte(b, ' ')
	if sp < 1 || sp > 64 || !bytes.HasPrefix(b[sp+1:], []byte("kernel: ")) {
		return b, false
	}
	ln.Host, ln.Ident = string(b[:sp]), "kernel"
	return b[sp+1+len("kernel: "):], true
}

// stripCaller removes the CONFIG_PRINTK_CALLER field that may follow the
// timestamp: "[  244.945440][ T3106] text" (task) or "[ C1]" (CPU).
func stripCaller(b []byte) []byte {
	if len(b) < 4 || b[0] != '[' {
		return b
	}
	end := bytes.IndexByte(b, ']')
	if end < 3 || end > 12 {
		return b
	}
	id := bytes.TrimLeft(b[1:end], " ")
	if len(id) < 2 || (id[0] != 'T' && id[0] != 'C') {
		return b
	}
	for _, c := range id[1:] {
		if c < '0' || c > '9' {
			return b
		}
	}
	return bytes.TrimPrefix(b[end+1:], []byte(" "))
}

// SplitGlued finds a second kernel timestamp inside a line ("...uid=0[
// 30104.280053] Out of memory: ..."), left when a paste lost a newline,
// and returns the index where the second record starts, or -1.
func SplitGlued(b []byte) int {
	for i := 1; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '[')
		if j < 0 {
			return -1
		}
		i += j
		end := bytes.IndexByte(b[i:], ']')
		if end < 3 || end > 20 {
			continue
		}
		// A record glued to the previous one follows it without a space;
		// "kernel: [  816.9] text" (syslog keeping the stamp) is one record.
		if _, ok := parseUptime(b[i+1 : i+end]); ok && b[i-1] != ' ' && b[i+1] != '+' {
			return i
		}
	}
	return -1
}
