package python

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteTree writes Files under dst (directories 0700, files 0600): what
// hook.Install puts on a job's PYTHONPATH and doctor's hook probe imports.
func WriteTree(dst string) error {
	return fs.WalkDir(Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		if d.IsDir() {
			if err := os.MkdirAll(target, 0o700); err != nil {
				return fmt.Errorf("create %s: %w", target, err)
			}
			return nil
		}
		b, err := fs.ReadFile(Files, p)
		if err != nil {
			return fmt.Errorf("read embedded %s: %w", p, err)
		}
		if err := os.WriteFile(target, b, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", target, err)
		}
		return nil
	})
}
