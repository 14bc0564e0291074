package runner

import (
	"fmt"
	"os"
	"strings"

	"github.com/torchmem/torchmem/internal/supervisor"
	"github.com/torchmem/torchmem/internal/tui"
)

// setupTUI starts the --tui view: the job's output goes to
// torchmem-ID.log (a full-screen view and the job cannot share the
// terminal) and torchmem's own lines into the view. Without a terminal it
// says so and changes nothing.
func (c *Config) setupTUI(sc *supervisor.Config, id string) (*tui.RunView, error) {
	if !sc.StatusLine {
		fmt.Fprintln(c.Notices, "torchmem: --tui needs a terminal on stderr; running without it")
		return nil, nil
	}
	path := "torchmem-" + id + ".log"
	logf, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--tui: create the job's log: %w", err)
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		logf.Close()
		return nil, err
	}
	sc.Stdout, sc.Stderr, sc.Stdin = logf, logf, devnull
	sc.Interactive, sc.StatusLine = false, false
	sc.Env = append(sc.Env, "PYTHONUNBUFFERED=1") // the tail stays current
	v := tui.StartRunView(os.Stdin, c.Notices, "torchmem run "+id+": "+strings.Join(c.Argv, " "), path, c.Lang)
	sc.Notices, sc.OnLive = v.Notices(), v.Live
	return v, nil
}
