package cli

import (
	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/supervisor"
)

// The hidden trampoline command: `torchmem run` re-executes torchmem with
// it to start the job inside its cgroup with NUMA binding and rlimits
// applied before exec. It is not for people to call.
func init() {
	register(supervisor.TrampolineArg, newRunExecCmd)
	register(supervisor.WitnessArg, newRunWitnessCmd)
}

// newRunWitnessCmd is the hidden SIGINT witness of an interactive run
// (supervisor.WitnessArg).
func newRunWitnessCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:                supervisor.WitnessArg,
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := supervisor.Witness(); code != 0 {
				return &ExitError{Code: code}
			}
			return nil
		},
	}
}

func newRunExecCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:                supervisor.TrampolineArg,
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return &ExitError{Code: supervisor.Trampoline(env.Stderr)}
		},
	}
}
