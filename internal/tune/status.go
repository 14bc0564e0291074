package tune

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// StatusItem is one applied setting or file and whether it drifted.
type StatusItem struct {
	Key    string `json:"key"`
	Target string `json:"target,omitempty"`
	Now    string `json:"now,omitempty"`
	Drift  bool   `json:"drift"`
	Note   string `json:"note,omitempty"`
	note   note
}

// State is what status reports.
type State struct {
	Applied bool         `json:"applied"`
	Profile string       `json:"profile,omitempty"`
	Time    string       `json:"time,omitempty"`
	Journal string       `json:"journal,omitempty"`
	Live    []StatusItem `json:"live,omitempty"`
	Files   []StatusItem `json:"files,omitempty"`
	Drifted bool         `json:"drifted"`
}

// Status compares the journal with the host: live values against their
// targets, files against what apply wrote.
func Status(opts Options) (State, error) {
	opts.defaults()
	j, err := ReadJournal(opts)
	if errors.Is(err, ErrNotApplied) {
		return State{}, nil
	}
	if err != nil {
		return State{}, err
	}
	st := State{Applied: j.State == "applied", Profile: j.Profile, Time: j.Time, Journal: JournalFile}
	for _, l := range j.Live {
		now := liveNow(&opts, l)
		it := StatusItem{Key: l.Key, Target: l.Target, Now: now, Drift: now != l.Target}
		if it.Drift {
			it.Note, it.note = noteEN("note.live_drift", ""), note{"note.live_drift", ""}
		}
		st.Live = append(st.Live, it)
		st.Drifted = st.Drifted || it.Drift
	}
	for _, f := range j.Files {
		it := StatusItem{Key: f.Path}
		if f.WroteLink != "" {
			link, err := os.Readlink(opts.path(f.Path))
			it.Drift = err != nil || link != f.WroteLink
		} else {
			b, err := os.ReadFile(opts.path(f.Path))
			it.Drift = err != nil || !bytes.Equal(b, f.Wrote)
		}
		if it.Drift {
			it.Note, it.note = noteEN("note.file_drift", ""), note{"note.file_drift", ""}
		}
		st.Files = append(st.Files, it)
		st.Drifted = st.Drifted || it.Drift
	}
	if j.State != "applied" {
		st.Drifted = true
	}
	return st, nil
}

func liveNow(o *Options, l LiveRecord) string {
	p := o.livePath(l.Path)
	if l.Kind == THP {
		v, err := readChoice(p)
		if err != nil {
			return "unreadable"
		}
		return v
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "unreadable"
	}
	return strings.TrimSpace(string(b))
}

// DropCaches writes 3 to /proc/sys/vm/drop_caches after a sync: the page
// cache, dentries and inodes are dropped at once. It is a one-shot for
// benchmarks, never part of a profile: every process then re-reads its
// files from disk (a training job's dataset included).
func DropCaches(opts Options) error {
	opts.defaults()
	if opts.realHost() && !opts.DryRun && os.Geteuid() != 0 {
		return errors.New("drop-caches needs root")
	}
	path := filepath.Join(opts.ProcRoot, "sys", "vm", "drop_caches")
	if opts.DryRun {
		return nil
	}
	unix.Sync()
	if err := writeKernel(path, "3"); err != nil {
		return fmt.Errorf("drop caches: %w", err)
	}
	return nil
}
