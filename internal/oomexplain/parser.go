package oomexplain

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/kmsg"
)

// Options bound and direct parsing.
type Options struct {
	// Source names the input in incidents ("-", a file name, "/dev/kmsg").
	Source string
	// MaxLine: longer lines are cut (default kmsg.DefaultMaxLine).
	MaxLine int
	// MaxRaw: raw lines kept per incident (default 64); MaxTasks: task
	// table rows kept, the biggest by RSS (default 16); MaxIncidents:
	// incidents kept by Parse (default 10000; OnIncident still sees all).
	MaxRaw, MaxTasks, MaxIncidents int
	// PageSize multiplies the task table's page counts (default 4096).
	PageSize int64
	// Lines completes timestamps (year of syslog dates, boot time).
	Lines kmsg.ParseOptions
	// OnIncident, when set, is called with each incident as soon as it is
	// complete (the kernel's "Killed process" line, the end of a CUDA
	// message). The incident may still gain details (the oom_reaper line).
	OnIncident func(*Incident)
}

func (o *Options) defaults() {
	if o.MaxLine <= 0 {
		o.MaxLine = kmsg.DefaultMaxLine
	}
	if o.MaxRaw <= 0 {
		o.MaxRaw = 64
	}
	if o.MaxTasks <= 0 {
		o.MaxTasks = 16
	}
	if o.MaxIncidents <= 0 {
		o.MaxIncidents = DefaultMaxIncidents
	}
	if o.PageSize <= 0 {
		o.PageSize = 4096
	}
}

// line is what each kind's parser sees.
type line struct {
	kmsg.Line
	no    int    // 1-based line number
	raw   int    // length of the physical line (prefix, quoting included)
	text  string // Text with "[rankN]:"/"host:" prefixes removed
	rank  *int
	host  string
	words wordSet // the kinds whose words Text holds (lineWords)
}

// kindParser is one incident kind's state machine.
type kindParser interface {
	// open reports that it is in the middle of an incident and needs to
	// see every line, not only those passing the anchor filter.
	open() bool
	feed(l *line)
	// flush ends any incident in progress (end of input).
	flush()
}

// Parser finds incidents in a stream of lines. Not safe for concurrent use.
type Parser struct {
	opts      Options
	kinds     []kindParser
	incidents []*Incident
	dropped   int
	lineNo    int
	rawLen    int
	cur       line // the line being fed (a field: passed by pointer, it would escape per line)
	// allWords makes every line take every parser's whole chain of
	// checks (tests compare it with the short paths).
	allWords bool
}

// NewParser returns a Parser with opts (zero values mean defaults).
func NewParser(opts Options) *Parser {
	opts.defaults()
	p := &Parser{opts: opts}
	p.kinds = []kindParser{newKernelParser(p), newCUDAParser(p), newHostParser(p)}
	return p
}

// Result is what ParseAll found: the incidents kept, in order, and how
// many more were found but not kept (Options.MaxIncidents).
type Result struct {
	Incidents []Incident
	Dropped   int
}

// DefaultMaxIncidents bounds the incidents one input keeps (each holds
// up to MaxRaw lines): a log dense with kills stays a few MiB.
const DefaultMaxIncidents = 10000

// ParseAll reads r to the end and returns every incident found, in order,
// with the count of those dropped by Options.MaxIncidents. A read error
// ends parsing: what was found so far is returned with the error (wrapped
// with Options.Source).
func ParseAll(r io.Reader, opts Options) (Result, error) {
	p := NewParser(opts)
	sc := kmsg.NewScanner(r, p.opts.MaxLine)
	for sc.Scan() {
		p.FeedBytes(sc.Bytes())
	}
	res := Result{Incidents: p.Close(), Dropped: p.Dropped()}
	if err := sc.Err(); err != nil {
		return res, fmt.Errorf("read %s: %w", p.opts.Source, err)
	}
	return res, nil
}

// Parse is ParseAll without the count of dropped incidents.
func Parse(r io.Reader, opts Options) ([]Incident, error) {
	res, err := ParseAll(r, opts)
	return res.Incidents, err
}

// FeedBytes parses one raw line (without its newline).
func (p *Parser) FeedBytes(b []byte) {
	p.lineNo++
	if !p.anyOpen() && !interesting(b) && !taskRowShape(b) {
		return
	}
	p.rawLen = len(b)
	b = stripQuote(b)
	for n := 0; n < 8; n++ { // records glued together by a lost newline
		i := kmsg.SplitGlued(b)
		if i < 0 {
			break
		}
		p.feed(kmsg.ParseLine(b[:i], p.opts.Lines))
		b = b[i:]
	}
	p.feed(kmsg.ParseLine(b, p.opts.Lines))
}

// stripQuote removes e-mail quoting ("> > > ") from pasted reports.
func stripQuote(b []byte) []byte {
	for len(b) > 0 && b[0] == '>' {
		b = b[1:]
		if len(b) > 0 && b[0] == ' ' {
			b = b[1:]
		}
	}
	return b
}

// Feed parses one line already split by a kmsg reader.
func (p *Parser) Feed(l kmsg.Line) {
	p.lineNo++
	p.rawLen = len(l.Text)
	if !p.anyOpen() && !interesting([]byte(l.Text)) {
		return
	}
	p.feed(l)
}

func (p *Parser) feed(kl kmsg.Line) {
	if strings.IndexByte(kl.Text, 0x1b) >= 0 {
		kl.Text = stripANSI(kl.Text)
	}
	if kl.Ident == "" {
		kernelTag(&kl)
	}
	if !kl.Prefixed {
		cutStamp(&kl)
	}
	p.cur = line{Line: kl, no: p.lineNo, text: kl.Text, raw: p.rawLen}
	l := &p.cur
	// Launcher prefixes belong to training output; kernel lines (with a
	// kernel timestamp or from the kernel's journal) are left alone.
	if kl.Ident != "kernel" && !kl.HasUptime {
		l.text, l.rank, l.host = stripRankPrefixes(kl.Text)
	}
	l.words = p.wordsOf(kl.Text) // l.text is a part of it
	for _, k := range p.kinds {
		k.feed(l)
	}
}

// kernelTag reads the syslog tag that kmsg leaves in the text when the
// host name is missing: "Sep  8 06:22:08 kernel: ..." (a syslog that
// logs none, corpus kernel/041) or "kernel: ..." (stamp and host cut by
// the poster, kernel/016). The line is the kernel's, and the tag is its
// prefix (a wrapped line's rest comes without it).
func kernelTag(kl *kmsg.Line) {
	if rest, ok := strings.CutPrefix(kl.Text, "kernel: "); ok {
		kl.Text, kl.Ident, kl.Prefixed = rest, "kernel", true
	}
}

// cutStamp reads a dmesg stamp whose '[' was cut off ("5193605.506728]
// Task in ..."): an excerpt that starts mid-line (corpus kernel/007). It
// is the line's prefix, so the wrapped rest of the line is joined to it.
func cutStamp(kl *kmsg.Line) {
	end := strings.Index(kl.Text[:min(len(kl.Text), 22)], "] ") // only the start can be a stamp
	if end < 3 || end > 20 {
		return
	}
	sec, frac, ok := strings.Cut(kl.Text[:end], ".")
	if !ok || !isDigits(sec) || !isDigits(frac) || len(frac) != 6 { // dmesg prints %5lu.%06lu
		return
	}
	s, _ := strconv.ParseFloat(kl.Text[:end], 64)
	kl.Text, kl.Prefixed = kl.Text[end+2:], true
	kl.Uptime, kl.HasUptime = time.Duration(s*float64(time.Second)), true
}

// kernelOpen: a kernel report is being read (its lines are the kernel's).
func (p *Parser) kernelOpen() bool {
	k, ok := p.kinds[0].(*kernelParser)
	return ok && k.cur != nil
}

func (p *Parser) anyOpen() bool {
	for _, k := range p.kinds {
		if k.open() {
			return true
		}
	}
	return false
}

// Close ends the input: incidents in progress are kept, marked Truncated.
// It returns all incidents in the order they started.
func (p *Parser) Close() []Incident {
	for _, k := range p.kinds {
		k.flush()
	}
	out := make([]Incident, len(p.incidents))
	for i, inc := range p.incidents {
		out[i] = *inc
	}
	sortByLine(out)
	return out
}

// Dropped counts incidents not kept because of Options.MaxIncidents.
func (p *Parser) Dropped() int { return p.dropped }

// newIncident starts an incident at l.
func (p *Parser) newIncident(kind Kind, l *line) *Incident {
	inc := &Incident{Kind: kind, Source: p.opts.Source, Line: l.no, Count: 1, Rank: l.rank, Host: l.host}
	if !l.Wall.IsZero() {
		t := l.Wall
		inc.Time, inc.TimeYearAssumed = &t, l.YearAssumed
	}
	if l.HasUptime {
		s := l.Uptime.Seconds()
		inc.UptimeSeconds = &s
	}
	if inc.Host == "" {
		inc.Host = l.Host
	}
	return inc
}

// emit records a complete incident and tells OnIncident.
func (p *Parser) emit(inc *Incident) {
	if len(p.incidents) < p.opts.MaxIncidents {
		p.incidents = append(p.incidents, inc)
	} else {
		p.dropped++
	}
	if p.opts.OnIncident != nil {
		p.opts.OnIncident(inc)
	}
}

// addRaw keeps a raw line within the MaxRaw bound.
func (p *Parser) addRaw(inc *Incident, s string) {
	n := len(inc.Raw)
	// The conclusion is kept even after a huge task table.
	if n >= p.opts.MaxRaw && (n >= p.opts.MaxRaw+8 ||
		!strings.Contains(s, "Killed process") && !strings.Contains(s, "oom-kill:") && !strings.Contains(s, "oom_reaper")) {
		inc.RawDropped++
		return
	}
	inc.Raw = append(inc.Raw, s)
}

func sortByLine(incs []Incident) {
	// Insertion sort: incidents arrive nearly in order (a CUDA message is
	// emitted when its last wrapped line arrives), so this is linear.
	for i := 1; i < len(incs); i++ {
		for j := i; j > 0 && lessIncident(&incs[j], &incs[j-1]); j-- {
			incs[j], incs[j-1] = incs[j-1], incs[j]
		}
	}
}

func lessIncident(a, b *Incident) bool {
	if a.Source != b.Source {
		return false
	}
	return a.Line < b.Line
}
