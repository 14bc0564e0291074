package kmsg

import (
	"bytes"
	"strings"
	"time"
	"unicode/utf8"
)

// Month names by language as strftime's %b prints them (lower case, dots
// and trailing spaces removed). dmesg -T uses the user's locale, so a paste
// from a German or French host says "Dez"/"déc.". Matching is by prefix of
// at least three letters; numeric months ("11月", "11월") are handled apart.
var monthNames = [12][]string{
	{"jan", "ene", "gen", "sty", "led", "янв", "oca"},
	{"feb", "fév", "fev", "lut", "úno", "фев", "şub"},
	{"mar", "mär", "mrt", "bře", "мар"},
	{"apr", "avr", "abr", "kwi", "dub", "апр", "nis"},
	{"may", "mai", "mei", "mag", "maj", "kvě", "мая", "май"},
	{"jun", "juin", "giu", "cze", "čvn", "июн", "haz"},
	{"jul", "juil", "lug", "lip", "čvc", "июл", "tem"},
	{"aug", "aoû", "aou", "ago", "sie", "srp", "авг", "ağu"},
	{"sep", "set", "wrz", "zář", "сен", "eyl"},
	{"oct", "okt", "ott", "out", "paź", "říj", "окт", "eki"},
	{"nov", "lis", "ноя", "kas"},
	{"dec", "dez", "déc", "dic", "gru", "pro", "дек", "ara"},
}

// monthOf returns 1-12 for a month token in any supported language.
func monthOf(tok string) int {
	if n := leadingInt(tok); n >= 1 && n <= 12 {
		return n // "11月", "11월", "11."
	}
	t := strings.ToLower(strings.TrimRight(tok, ". "))
	if utf8.RuneCountInString(t) < 3 {
		return 0
	}
	for m, names := range monthNames {
		for _, n := range names {
			if strings.HasPrefix(t, n) {
				return m + 1
			}
		}
	}
	return 0
}

func leadingInt(s string) int {
	n, i := 0, 0
	for ; i < len(s) && i < 4 && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if i == 0 {
		return -1
	}
	return n
}

// parseCtime parses dmesg -T's "%a %b %e %H:%M:%S %Y" in any locale by
// position around the hh:mm:ss token: month and day before it, year after
// it; the weekday is ignored (Spanish "mar" is Tuesday, not March).
func parseCtime(b []byte, loc *time.Location) (time.Time, bool) {
	toks := strings.Fields(string(b))
	ti := -1
	for i, t := range toks {
		if len(t) == 8 && t[2] == ':' && t[5] == ':' {
			ti = i
		}
	}
	if ti < 2 || ti != len(toks)-2 || len(toks) > 5 {
		return time.Time{}, false
	}
	hh, mm, ss := leadingInt(toks[ti]), leadingInt(toks[ti][3:]), leadingInt(toks[ti][6:])
	day, year := leadingInt(toks[ti-1]), leadingInt(toks[ti+1])
	if hh < 0 || mm < 0 || ss < 0 || day < 1 || day > 31 || year < 1970 || len(toks[ti+1]) != 4 {
		return time.Time{}, false
	}
	month := monthOf(toks[ti-2])
	if month == 0 {
		// Known shape, unknown language: still a prefix, time unknown.
		return time.Time{}, true
	}
	return time.Date(year, time.Month(month), day, hh, mm, ss, 0, loc), true
}

// parseISOHeader handles "2026-11-29T22:31:42,123456+00:00 text" (dmesg
// --time-format iso) and "2026-11-29T22:31:42.123+0000 host ident: text"
// (journalctl short-iso, rsyslog RFC 3339).
func parseISOHeader(b []byte, ln *Line, o *ParseOptions) ([]byte, bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != ' ') {
		return b, false
	}
	end := bytes.IndexByte(b[11:], ' ')
	if end < 0 {
		end = len(b) - 11
	}
	t, ok := parseDateTime(b[:11+end], o.loc())
	if !ok {
		return b, false
	}
	ln.Wall = t
	rest := b[min(len(b), 12+end):]
	if r, ok := parseSyslogTail(rest, ln, o); ok {
		return r, true
	}
	return rest, true
}

var isoLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
}

func parseISOStamp(s string, loc *time.Location) (time.Time, bool) {
	for _, l := range isoLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

var syslogMonths = map[string]time.Month{
	"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6,
	"Jul": 7, "Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12,
}

// parseSyslogHeader handles "Nov 29 22:31:42[.123456] host ident[pid]: text".
func parseSyslogHeader(b []byte, ln *Line, o *ParseOptions) ([]byte, bool) {
	if len(b) < 16 || b[3] != ' ' {
		return b, false
	}
	mon, ok := syslogMonths[string(b[:3])]
	if !ok {
		return b, false
	}
	day := leadingInt(string(bytes.TrimLeft(b[4:6], " ")))
	if day < 1 || day > 31 || b[6] != ' ' || b[9] != ':' || b[12] != ':' {
		return b, false
	}
	hh, mm, ss := leadingInt(string(b[7:9])), leadingInt(string(b[10:12])), leadingInt(string(b[13:15]))
	i, nsec := 15, 0
	if i < len(b) && b[i] == '.' {
		scale := int(1e9)
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			scale /= 10
			nsec += int(b[i]-'0') * scale
		}
	}
	ln.Wall, ln.YearAssumed = completeYear(mon, day, hh, mm, ss, nsec, o), true
	rest := bytes.TrimLeft(b[min(i, len(b)):], " ")
	if r, ok := parseSyslogTail(rest, ln, o); ok {
		return r, true
	}
	return rest, true
}

func completeYear(mon time.Month, day, hh, mm, ss, nsec int, o *ParseOptions) time.Time {
	if o.Year != 0 {
		return time.Date(o.Year, mon, day, hh, mm, ss, nsec, o.loc())
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	t := time.Date(now.Year(), mon, day, hh, mm, ss, nsec, o.loc())
	if t.After(now.Add(48 * time.Hour)) {
		t = t.AddDate(-1, 0, 0)
	}
	return t
}

// parseSyslogTail parses "host ident[pid]: text" after a date, and the
// "[  816.907974] " that RHEL 7's rsyslog keeps inside kernel messages.
func parseSyslogTail(b []byte, ln *Line, o *ParseOptions) ([]byte, bool) {
	sp := bytes.IndexByte(b, ' ')
	if sp < 1 || sp > 255 {
		return b, false
	}
	host, rest := b[:sp], b[sp+1:]
	colon := bytes.Index(rest, []byte(": "))
	if colon < 1 || colon > 128 || bytes.IndexByte(rest[:colon], ' ') >= 0 {
		if bytes.HasSuffix(rest, []byte(":")) && bytes.IndexByte(rest, ' ') < 0 {
			colon = len(rest) - 1 // "host kernel:" with an empty message
		} else {
			return b, false
		}
	}
	ident := rest[:colon]
	if lb := bytes.IndexByte(ident, '['); lb > 0 && ident[len(ident)-1] == ']' {
		ln.PID = leadingInt(string(ident[lb+1:]))
		ident = ident[:lb]
	}
	ln.Host, ln.Ident = string(host), string(ident)
	msg := rest[min(len(rest), colon+2):]
	if len(msg) > 0 && msg[0] == '[' {
		var tmp Line
		if r, ok := parseBracket(msg, &tmp, o); ok && tmp.HasUptime {
			ln.Uptime, ln.HasUptime = tmp.Uptime, true
			msg = r
		}
	}
	return msg, true
}

// parseDateTime reads an ISO 8601 date and time whose 'T' may be a space
// and whose decimal point may be a comma: "2026-11-29T22:31:42,123456+00:00"
// (dmesg --time-format iso), "2026-11-29 22:31:42" (some log shippers,
// journalctl short-full), "2024-03-26 16:50:50,221" (Python logging, torchrun).
func parseDateTime(b []byte, loc *time.Location) (time.Time, bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != ' ' && b[10] != 'T') {
		return time.Time{}, false
	}
	s := string(b[:10]) + "T" + strings.Replace(string(b[11:]), ",", ".", 1)
	return parseISOStamp(s, loc)
}

var weekdays = map[string]bool{"Mon": true, "Tue": true, "Wed": true, "Thu": true, "Fri": true, "Sat": true, "Sun": true}

// parseShortFull handles journalctl -o short-full:
// "Sun 2026-11-29 22:31:42 UTC host kernel: text" (zone names are not
// resolved: the time is read in the configured location).
func parseShortFull(b []byte, ln *Line, o *ParseOptions) ([]byte, bool) {
	if len(b) < 24 || b[3] != ' ' || !weekdays[string(b[:3])] {
		return b, false
	}
	rest := b[4:]
	end := bytes.IndexByte(rest[11:], ' ')
	if end < 0 {
		return b, false
	}
	t, ok := parseDateTime(rest[:11+end], o.loc())
	if !ok {
		return b, false
	}
	ln.Wall = t
	rest = rest[12+end:]
	if sp := bytes.IndexByte(rest, ' '); sp > 0 && sp < 8 { // the zone name
		rest = rest[sp+1:]
	}
	if r, ok := parseSyslogTail(rest, ln, o); ok {
		return r, true
	}
	return rest, true
}
