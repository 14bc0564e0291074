package tune

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Journal records everything apply changed, written before the first
// change, so revert (or a rollback) can put each byte back.
type Journal struct {
	Version  int          `json:"version"`
	Profile  string       `json:"profile"`
	State    string       `json:"state"` // "applying" until every step is done, then "applied"
	Time     string       `json:"time"`
	Root     string       `json:"root"`
	Files    []FileRecord `json:"files"`
	Dirs     []string     `json:"created_dirs,omitempty"` // in creation order
	Live     []LiveRecord `json:"live,omitempty"`
	Undo     [][]string   `json:"undo_commands,omitempty"`
	Settings []Change     `json:"settings"`
}

// FileRecord is a file's state before apply.
type FileRecord struct {
	Path    string      `json:"path"`
	Existed bool        `json:"existed"`
	Content []byte      `json:"content,omitempty"` // previous bytes (base64 in JSON)
	Mode    fs.FileMode `json:"mode,omitempty"`
	Link    string      `json:"link,omitempty"` // previous symlink target
	// Wrote is what apply put there, to tell drift in status.
	Wrote     []byte `json:"wrote,omitempty"`
	WroteLink string `json:"wrote_link,omitempty"`
}

// LiveRecord is a live kernel value before apply.
type LiveRecord struct {
	Key           string `json:"key"`
	Path          string `json:"path"` // as on the host: /proc/sys/vm/swappiness
	Kind          Kind   `json:"kind"`
	PreviousRaw   []byte `json:"previous_raw"`
	PreviousValue string `json:"previous"`
	Target        string `json:"target"`
}

const journalVersion = 1

// ErrNotApplied: there is no journal, nothing to revert.
var ErrNotApplied = errors.New("no torchmem tune journal: nothing is applied")

// ReadJournal reads <root>/var/lib/torchmem/tune/journal.json.
func ReadJournal(o Options) (*Journal, error) {
	o.defaults()
	path := o.path(JournalFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotApplied
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if j.Version != journalVersion {
		return nil, fmt.Errorf("%s: journal version %d, this torchmem reads %d", path, j.Version, journalVersion)
	}
	if err := j.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &j, nil
}

// check refuses a journal that names what apply never touches: revert
// writes every path in it and runs its undo commands as root, so a
// damaged or edited journal must not reach outside torchmem's own files.
func (j *Journal) check() error {
	for _, l := range j.Live {
		if !under(l.Path, "/proc/sys/", "/sys/kernel/mm/transparent_hugepage/") {
			return fmt.Errorf("live value %q: path %q is not a sysctl or THP file", l.Key, l.Path)
		}
	}
	for _, f := range j.Files {
		if !under(f.Path, "/etc/") {
			return fmt.Errorf("file %q is not under /etc", f.Path)
		}
	}
	for _, d := range j.Dirs {
		if d != "/etc" && d != "/var" && d != "/var/lib" && !under(d, "/etc/", "/var/lib/torchmem") {
			return fmt.Errorf("created directory %q is not one apply makes", d)
		}
	}
	for _, c := range j.Undo {
		if len(c) == 0 || c[0] != "systemctl" && c[0] != "tuned-adm" {
			return fmt.Errorf("undo command %q is not systemctl or tuned-adm", c)
		}
	}
	return nil
}

// under: p is clean (no "..") and starts with one of the prefixes.
func under(p string, prefixes ...string) bool {
	if filepath.Clean(p) != p {
		return false
	}
	for _, pre := range prefixes {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

// write saves the journal durably (temp file, fsync, rename).
func (j *Journal) write(o *Options) error { return j.save(o, false) }

// create saves the first journal, failing if one appeared meanwhile: a
// hard link, unlike rename, never replaces, so two concurrent applies
// cannot both start.
func (j *Journal) create(o *Options) error { return j.save(o, true) }

func (j *Journal) save(o *Options, exclusive bool) error {
	path := o.path(JournalFile)
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if !exclusive {
		return os.Rename(tmp, path)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		return fmt.Errorf("another torchmem tune apply is running or finished (%s): %w", JournalFile, err)
	}
	return nil
}

// snapshotFile records path's current state.
func snapshotFile(o *Options, shown string) (FileRecord, error) {
	r := FileRecord{Path: shown}
	p := o.path(shown)
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	r.Existed, r.Mode = true, st.Mode()
	if st.Mode()&fs.ModeSymlink != 0 {
		r.Link, err = os.Readlink(p)
		return r, err
	}
	r.Content, err = os.ReadFile(p)
	return r, err
}

// missingDirs lists the directories that would be created for path,
// outermost first.
func missingDirs(o *Options, shown string) []string {
	var dirs []string
	for d := filepath.Dir(shown); d != "/" && d != "."; d = filepath.Dir(d) {
		if _, err := os.Lstat(o.path(d)); err == nil {
			break
		}
		dirs = append([]string{d}, dirs...)
	}
	return dirs
}
