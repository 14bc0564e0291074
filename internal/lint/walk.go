package lint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// walkPython lists the *.py files under dir in lexical order.
func walkPython(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // an unreadable subfolder is skipped, not fatal
		}
		if d.IsDir() {
			if path != dir && (skipDirs[d.Name()] || isVenv(path)) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".py") {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", dir, err)
	}
	return out, nil
}

func isVenv(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "pyvenv.cfg"))
	return err == nil
}
