package tune

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/shm"
	"github.com/torchmem/torchmem/internal/units"
)

// Runner runs a command on the real host (systemctl, tuned-adm).
type Runner func(name string, args ...string) error

// Options says where tune works. Root "/" is the real host; any other
// directory is a tree (tests, images), where no command is run.
type Options struct {
	Root     string
	ProcRoot string // default <Root>/proc
	SysRoot  string // default <Root>/sys
	DryRun   bool
	Run      Runner
	Now      func() time.Time
	// Persist chooses THP persistence: "auto" (tuned if installed, else a
	// systemd unit), "tuned" or "systemd".
	Persist string
}

func (o *Options) defaults() {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.ProcRoot == "" {
		o.ProcRoot = filepath.Join(o.Root, "proc")
	}
	if o.SysRoot == "" {
		o.SysRoot = filepath.Join(o.Root, "sys")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Persist == "" {
		o.Persist = "auto"
	}
}

// realHost: commands run and root is required only on the real host.
func (o *Options) realHost() bool { return filepath.Clean(o.Root) == "/" }

func (o *Options) path(rel string) string { return filepath.Join(o.Root, rel) }

// Actions of a change.
const (
	ActSet    = "set"    // will be changed
	ActKeep   = "keep"   // already meets the advice
	ActSkip   = "skip"   // not applicable on this host
	ActAdvice = "advice" // shown, never applied
)

// Change is one setting of the plan with the host's current value.
type Change struct {
	Setting
	Current string `json:"current"`
	Action  string `json:"action"`
	Hard    string `json:"hard,omitempty"`    // limits: the current hard limit
	Live    string `json:"live,omitempty"`    // where the live value is written
	Persist string `json:"persist,omitempty"` // the file that makes it survive a reboot
	Note    string `json:"note,omitempty"`
	// note is Note as a catalog message (messages.go), for NoteIn.
	note note
}

// File is a file apply writes (or a symlink, when Link is set).
type File struct {
	Path    string `json:"path"` // absolute, as on the host
	Content string `json:"content,omitempty"`
	Link    string `json:"link,omitempty"`
}

// Plan is everything apply would do.
type Plan struct {
	Profile     string     `json:"profile"`
	Persistence string     `json:"thp_persistence"` // "tuned", "systemd" or ""
	Changes     []Change   `json:"changes"`
	Files       []File     `json:"files"`
	Commands    [][]string `json:"commands,omitempty"` // run after the files, on the real host
}

// MakePlan reads the current values and decides what profile changes.
func MakePlan(opts Options, profile string) (Plan, error) {
	opts.defaults()
	settings, ok := Profiles[profile]
	if !ok {
		return Plan{}, fmt.Errorf("unknown profile %q (have %s)", profile, strings.Join(profileNames(), ", "))
	}
	if opts.Persist != "auto" && opts.Persist != "tuned" && opts.Persist != "systemd" {
		// Checked here too: render asks only when THP changes.
		return Plan{}, fmt.Errorf("--persist %q: want auto, tuned or systemd", opts.Persist)
	}
	p := Plan{Profile: profile}
	multi := numaNodes(opts.SysRoot) > 1
	for _, s := range settings {
		p.Changes = append(p.Changes, plan1(&opts, s, multi))
	}
	if err := p.render(&opts); err != nil {
		return Plan{}, err
	}
	return p, nil
}

func profileNames() []string {
	var n []string
	for k := range Profiles {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func plan1(o *Options, s Setting, multi bool) Change {
	c := Change{Setting: s}
	c.Current, c.Live = current(o, s)
	if s.Kind == Limit {
		c.Current, c.Hard = currentLimit(o, strings.TrimPrefix(s.Key, "limits."))
	}
	switch {
	case s.MultiNode && !multi:
		c.Action = ActSkip
		c.setNote("note.one_numa_node", "")
	case s.Kind == Advice:
		c.Action = ActAdvice
		if s.Fine(c.Current) {
			c.Action = ActKeep
		}
	case c.Current == "":
		c.Action = ActSkip
		c.setNote("note.not_present", "")
	case s.Fine(c.Current):
		c.Action = ActKeep
		if s.Enough != "" && c.Current != c.Target {
			c.setNote("note.enough", s.Enough)
		}
	default:
		c.Action = ActSet
		if s.Kind == THP {
			pickChoice(o, &c)
		}
	}
	return c
}

// pickChoice sets the target to the first of Target and Else that the
// kernel's choice file offers.
func pickChoice(o *Options, c *Change) {
	b, err := os.ReadFile(o.livePath(c.Live))
	if err != nil {
		return
	}
	offered := map[string]bool{}
	for _, w := range strings.Fields(string(b)) {
		offered[strings.Trim(w, "[]")] = true
	}
	for _, t := range append([]string{c.Target}, c.Else...) {
		if offered[t] {
			if t != c.Target {
				c.setNote("note.not_offered", c.Target)
			}
			c.Target = t
			return
		}
	}
	c.Action = ActSkip
	c.setNote("note.not_offered", c.Target)
}

// current returns a setting's live value and the file it is read from.
func current(o *Options, s Setting) (string, string) {
	switch s.Kind {
	case Sysctl:
		rel := "sys/" + strings.ReplaceAll(s.Key, ".", "/")
		b, err := os.ReadFile(filepath.Join(o.ProcRoot, rel))
		if err != nil {
			return "", "/proc/" + rel
		}
		return strings.TrimSpace(string(b)), "/proc/" + rel
	case THP:
		rel := "kernel/mm/transparent_hugepage/" + strings.TrimPrefix(s.Key, "thp.")
		v, err := readChoice(filepath.Join(o.SysRoot, rel))
		if err != nil {
			return "", "/sys/" + rel
		}
		return v, "/sys/" + rel
	case Advice:
		return shmState(o), ""
	}
	return "", ""
}

var limitNames = map[string]string{"nproc": "Max processes", "nofile": "Max open files", "memlock": "Max locked memory"}

// currentLimit reads the soft and hard limit this shell runs under, with
// procfs's reader; both are "" when /proc/self/limits has no such line.
func currentLimit(o *Options, item string) (soft, hard string) {
	fs, err := procfs.NewFS(o.ProcRoot)
	if err != nil {
		return "", ""
	}
	m, err := fs.SelfLimits()
	r, ok := m[limitNames[item]]
	if err != nil || !ok {
		return "", ""
	}
	// Exact numbers (JSON's current and hard); CurrentText shows byte
	// counts in IEC units.
	return procfs.FormatLimit(r.Soft), procfs.FormatLimit(r.Hard)
}

// CurrentText is Current as people read it: a byte count in IEC units
// ("8.00 MiB", not "8388608"), anything else as read.
func (c Change) CurrentText() string {
	if !c.Bytes {
		return c.Current
	}
	n, err := strconv.ParseInt(c.Current, 10, 64)
	if err != nil {
		return c.Current // "unlimited"
	}
	return units.Bytes(n)
}

// shmState judges /dev/shm's mount as doctor's dev.shm check does, with
// the same reader and thresholds (internal/shm): "ok", or its title. An
// unreadable mountinfo is "ok", as the check's finding is then only a notice.
func shmState(o *Options) string {
	mem := memTotal(o.ProcRoot)
	m, err := shm.ReadMount(o.ProcRoot, mem)
	if err != nil || m.Judge(mem) == shm.Enough {
		return "ok"
	}
	return m.Title()
}

// memTotal returns MemTotal in bytes, 0 when unknown.
func memTotal(procRoot string) uint64 {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return 0
	}
	m, err := fs.Meminfo()
	if err != nil || m.MemTotalBytes == nil {
		return 0
	}
	return *m.MemTotalBytes
}

func numaNodes(sysRoot string) int {
	m, _ := filepath.Glob(filepath.Join(sysRoot, "devices", "system", "node", "node[0-9]*"))
	return len(m)
}
