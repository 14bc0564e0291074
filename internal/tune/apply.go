package tune

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"
)

// Apply makes the plan's changes: journal first, then files, live values
// and (on the real host) the activation commands. A failing step rolls back
// every step before it. With DryRun it returns the journal it would write.
func Apply(opts Options, p Plan) (*Journal, error) {
	opts.defaults()
	if opts.realHost() && !opts.DryRun && os.Geteuid() != 0 {
		return nil, errors.New("tune apply changes kernel settings and /etc: run it as root")
	}
	if j, err := ReadJournal(opts); err == nil {
		return nil, fmt.Errorf("profile %s is already applied (%s): run torchmem tune revert first", j.Profile, j.Time)
	} else if !errors.Is(err, ErrNotApplied) {
		return nil, err
	}
	j, err := newJournal(&opts, p)
	if err != nil || opts.DryRun {
		return j, err
	}
	if err := createDirs(&opts, j.Dirs, JournalFile); err != nil {
		_ = removeDirs(&opts, j.Dirs)
		return nil, err
	}
	if err := j.create(&opts); err != nil {
		_ = removeDirs(&opts, j.Dirs)
		return nil, err
	}
	if err := applySteps(&opts, p, j); err != nil {
		if rerr := restore(&opts, j); rerr != nil {
			return nil, fmt.Errorf("%w; rollback failed too: %v (journal kept at %s)", err, rerr, JournalFile)
		}
		return nil, fmt.Errorf("%w (everything done so far was rolled back)", err)
	}
	j.State = "applied"
	return j, j.write(&opts)
}

func newJournal(o *Options, p Plan) (*Journal, error) {
	j := &Journal{Version: journalVersion, Profile: p.Profile, State: "applying", Time: o.Now().UTC().Format(time.RFC3339), Root: o.Root, Settings: p.Changes}
	seen := map[string]bool{}
	addDirs := func(shown string) {
		for _, d := range missingDirs(o, shown) {
			if !seen[d] {
				seen[d] = true
				j.Dirs = append(j.Dirs, d)
			}
		}
	}
	addDirs(JournalFile)
	for _, f := range p.Files {
		rec, err := snapshotFile(o, f.Path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f.Path, err)
		}
		rec.Wrote, rec.WroteLink = []byte(f.Content), f.Link
		j.Files = append(j.Files, rec)
		addDirs(f.Path)
	}
	sort.SliceStable(j.Dirs, func(a, b int) bool { return strings.Count(j.Dirs[a], "/") < strings.Count(j.Dirs[b], "/") })
	for _, c := range p.Changes {
		if c.Action != ActSet || (c.Kind != Sysctl && c.Kind != THP) {
			continue
		}
		raw, err := os.ReadFile(o.livePath(c.Live))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", c.Live, err)
		}
		j.Live = append(j.Live, LiveRecord{Key: c.Key, Path: c.Live, Kind: c.Kind, PreviousRaw: raw, PreviousValue: c.Current, Target: c.Target})
	}
	j.Undo = undoCommands(o, p)
	return j, nil
}

// undoCommands: what revert runs on the real host to take the
// activation back (the previous tuned profile, a daemon-reload).
func undoCommands(o *Options, p Plan) [][]string {
	switch p.Persistence {
	case "tuned":
		prev := activeTuned(o)
		if prev == "" || prev == "off" {
			return [][]string{{"tuned-adm", "off"}}
		}
		return [][]string{{"tuned-adm", "profile", prev}}
	case "systemd":
		return [][]string{{"systemctl", "daemon-reload"}}
	}
	return nil
}

func applySteps(o *Options, p Plan, j *Journal) error {
	for _, f := range p.Files {
		if err := createDirs(o, j.Dirs, f.Path); err != nil {
			return err
		}
		if err := writeFile(o, f); err != nil {
			return err
		}
	}
	for _, l := range j.Live {
		var err error
		if l.Kind == THP {
			err = writeChoice(o.livePath(l.Path), l.Target)
		} else {
			err = writeSysctl(o.livePath(l.Path), l.Target)
		}
		if err != nil {
			return fmt.Errorf("set %s = %s: %w", l.Key, l.Target, err)
		}
	}
	return runCommands(o, p.Commands)
}

func writeFile(o *Options, f File) error {
	p := o.path(f.Path)
	if f.Link != "" {
		_ = os.Remove(p)
		if err := os.Symlink(f.Link, p); err != nil {
			return fmt.Errorf("link %s: %w", f.Path, err)
		}
		return nil
	}
	if err := os.WriteFile(p, []byte(f.Content), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", f.Path, err)
	}
	return nil
}

// createDirs makes the recorded missing directories on the way to path.
func createDirs(o *Options, dirs []string, path string) error {
	for _, d := range dirs {
		if strings.HasPrefix(path, d+"/") {
			if err := os.Mkdir(o.path(d), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("mkdir %s: %w", d, err)
			}
		}
	}
	return nil
}

func runCommands(o *Options, cmds [][]string) error {
	if !o.realHost() || o.Run == nil {
		return nil // a tree: nothing to activate
	}
	for _, c := range cmds {
		// systemctl only talks to a running systemd (sd_booted's test);
		// in a container or a chroot the unit file is enough for next boot.
		if c[0] == "systemctl" && !exists(o.path("/run/systemd/system")) {
			continue
		}
		if err := o.Run(c[0], c[1:]...); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(c, " "), err)
		}
	}
	return nil
}
