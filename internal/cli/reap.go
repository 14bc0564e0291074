package cli

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/supervisor"
)

func init() { register("__reap", newReapCmd) }

// reapCommand is the hidden command `torchmem run` starts beside itself
// (supervisor.Config.ReaperArgv): it waits for that supervisor and cleans
// up after it if it dies without doing so.
const reapCommand = "__reap"

func newReapCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:    reapCommand + " OWNER-FILE",
		Short:  "Clean up after a torchmem run whose supervisor dies (started by torchmem run)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A closing terminal or a Ctrl-C meant for the job must not end
			// the reaper; its supervisor's end does.
			signal.Ignore(syscall.SIGHUP, syscall.SIGINT)
			if line := supervisor.Reap(context.Background(), env.ProcRoot, args[0]); line != "" {
				fmt.Fprintln(env.Stderr, "torchmem: "+line)
			}
			return nil
		},
	}
}
