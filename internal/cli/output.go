package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/torchmem/torchmem/internal/textwrap"
)

// writeJSON is the one way commands print --json output: indented, with a
// trailing newline, HTML characters left alone.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	return nil
}

// newTable returns a writer of aligned plain-text tables (cells end with
// a tab; call Flush), padded by display width so Chinese cells align.
func newTable(w io.Writer) *textwrap.Table {
	return textwrap.NewTable(w)
}

// isTerminal reports whether w is a terminal: live views, progress bars and
// status lines are drawn only there, never into pipes, files or test buffers.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
