package tune

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Revert restores every file and live value the journal recorded, runs
// the undo commands on the real host, and removes the journal.
func Revert(opts Options) (*Journal, error) {
	opts.defaults()
	if opts.realHost() && !opts.DryRun && os.Geteuid() != 0 {
		return nil, errors.New("tune revert restores kernel settings and /etc: run it as root")
	}
	j, err := ReadJournal(opts)
	if err != nil || opts.DryRun {
		return j, err
	}
	return j, restore(&opts, j)
}

// restore undoes a journal in reverse order; it keeps going past a failed
// step so as much as possible is restored, and keeps the journal then.
func restore(o *Options, j *Journal) error {
	var errs []error
	for i := len(j.Live) - 1; i >= 0; i-- {
		l := j.Live[i]
		if err := restoreLive(o.livePath(l.Path), l); err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w", l.Key, err))
		}
	}
	for i := len(j.Files) - 1; i >= 0; i-- {
		if err := restoreFile(o, j.Files[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := runCommands(o, j.Undo); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := os.Remove(o.path(JournalFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return removeDirs(o, j.Dirs)
}

func restoreFile(o *Options, r FileRecord) error {
	p := o.path(r.Path)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", r.Path, err)
	}
	switch {
	case !r.Existed:
		return nil
	case r.Link != "":
		if err := os.Symlink(r.Link, p); err != nil {
			return fmt.Errorf("restore link %s: %w", r.Path, err)
		}
	default:
		if err := os.WriteFile(p, r.Content, r.Mode.Perm()); err != nil {
			return fmt.Errorf("restore %s: %w", r.Path, err)
		}
		// WriteFile's mode is filtered by the umask: set it exactly.
		if err := os.Chmod(p, r.Mode.Perm()); err != nil {
			return fmt.Errorf("chmod %s: %w", r.Path, err)
		}
	}
	return nil
}

// removeDirs removes the directories apply created, deepest first, if
// they are empty (something else may have put files there since).
func removeDirs(o *Options, dirs []string) error {
	for i := len(dirs) - 1; i >= 0; i-- {
		err := os.Remove(o.path(dirs[i]))
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !isNotEmpty(err) {
			return fmt.Errorf("remove %s: %w", dirs[i], err)
		}
	}
	return nil
}

func isNotEmpty(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "directory not empty"
}
