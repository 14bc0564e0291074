package hook

import (
	"maps"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/torchmem/torchmem/internal/ratelimit"
)

// What one message may carry: longer fields are cut (Message.Clamp), so a
// job cannot make the supervisor hold or store more than this per message.
const (
	MaxTextBytes  = 64 << 10 // exception traceback (the hook cuts it to 64 Ki characters itself)
	MaxPathBytes  = 4 << 10  // snapshot paths
	MaxLineText   = 1 << 10  // notice text, ack error, snapshot error
	MaxShortBytes = 256      // exception type, thread name, versions, command names
	MaxDevices    = 64       // devices in one stats message
	MaxArgs       = 64       // hello argv entries, each cut to 1 KiB
)

// Rate is a token bucket: PerSecond messages a second on average, Burst at once.
type Rate struct {
	PerSecond float64
	Burst     int
}

// Budget bounds what the hooked processes of one run can send: per message
// type a rate shared by all of them (a flood from one process cannot
// multiply by forking), and how many may be connected at once. Messages
// over their rate are dropped before they are queued, and counted.
type Budget struct {
	// Rates by message type; a type not listed (an unknown one from a
	// newer hook) uses Rates[""].
	Rates    map[string]Rate
	MaxPeers int
}

// DefaultBudget is far above what the hook sends (stats once a second per
// process, steps at most 20 a second per process, one hello and bye per
// process, exceptions and OOMs once or twice in a run) and far below what
// would grow the supervisor or the history store without bound.
func DefaultBudget() Budget {
	return Budget{MaxPeers: 1024, Rates: map[string]Rate{
		TypeStats: {500, 2000}, TypeStep: {500, 2000},
		TypeHello: {50, 1024}, TypeBye: {50, 1024},
		TypeException: {2, 20}, TypeOOM: {2, 20}, TypeNotice: {2, 20},
		TypeAck: {20, 100}, "": {1, 10},
	}}
}

// budgeter applies a Budget; its counters are what was dropped.
type budgeter struct {
	mu        sync.Mutex
	b         Budget
	buckets   map[string]*ratelimit.Bucket
	dropped   map[string]int64
	truncated int64
}

func newBudgeter(b Budget) *budgeter {
	if b.Rates == nil && b.MaxPeers == 0 {
		b = DefaultBudget()
	}
	return &budgeter{b: b, buckets: map[string]*ratelimit.Bucket{}, dropped: map[string]int64{}}
}

// allow takes a token for a message of type typ at now; false counts a drop.
func (g *budgeter) allow(typ string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := typ
	r, ok := g.b.Rates[typ]
	if !ok {
		key, r = "", g.b.Rates[""]
	}
	bk := g.buckets[key]
	if bk == nil {
		bk = ratelimit.New(r.PerSecond, r.Burst)
		g.buckets[key] = bk
	}
	if bk.Allow(now) {
		return true
	}
	g.dropped[typ]++
	return false
}

func (g *budgeter) drop(what string) {
	g.mu.Lock()
	g.dropped[what]++
	g.mu.Unlock()
}

func (g *budgeter) cut() {
	g.mu.Lock()
	g.truncated++
	g.mu.Unlock()
}

func (g *budgeter) counts() (map[string]int64, int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.dropped), g.truncated
}

// Clamp cuts every field a hooked process wrote to its bound (the
// constants above) and reports whether it cut anything.
func (m *Message) Clamp() bool {
	switch {
	case m.Exception != nil:
		e := m.Exception
		return cutAll(field{&e.Text, MaxTextBytes}, field{&e.ExcType, MaxShortBytes}, field{&e.Thread, MaxShortBytes})
	case m.OOM != nil:
		return cutAll(field{&m.OOM.Snapshot, MaxPathBytes}, field{&m.OOM.SnapshotErr, MaxLineText})
	case m.Notice != nil:
		return cutAll(field{&m.Notice.Text, MaxLineText})
	case m.Ack != nil:
		return cutAll(field{&m.Ack.Error, MaxLineText}, field{&m.Ack.Path, MaxPathBytes}, field{&m.Ack.Cmd, MaxShortBytes})
	case m.Stats != nil && len(m.Stats.Devices) > MaxDevices:
		m.Stats.Devices = m.Stats.Devices[:MaxDevices]
		return true
	case m.Hello != nil:
		return m.Hello.clamp()
	}
	return false
}

func (h *Hello) clamp() bool {
	c := cutAll(field{&h.Torch, MaxShortBytes}, field{&h.CUDA, MaxShortBytes}, field{&h.Python, MaxShortBytes}, field{&h.StepHook, MaxShortBytes})
	if len(h.Argv) > MaxArgs {
		h.Argv, c = h.Argv[:MaxArgs], true
	}
	for i := range h.Argv {
		if cutAll(field{&h.Argv[i], 4 * MaxShortBytes}) {
			c = true
		}
	}
	return c
}

// field is a string to cut to n bytes.
type field struct {
	s *string
	n int
}

// cutAll shortens each field to its bound on a rune boundary; true when
// it cut any.
func cutAll(fs ...field) bool {
	c := false
	for _, f := range fs {
		if len(*f.s) <= f.n {
			continue
		}
		i := f.n
		for i > 0 && !utf8.RuneStart((*f.s)[i]) {
			i--
		}
		*f.s, c = (*f.s)[:i], true
	}
	return c
}
