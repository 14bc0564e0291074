package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// exactArgs is cobra.ExactArgs with an error a user can act on: which
// argument is missing, what it is, and the usage line ("torchmem show:
// missing RUN (a run id from `torchmem runs`, a unique prefix, or last);
// usage: torchmem show RUN [flags]"), instead of "accepts 1 arg(s),
// received 0". names are the arguments as Use spells them; what says
// what they are.
func exactArgs(what string, names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		n := len(names)
		// Run prints "torchmem: " before every error already.
		path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		switch {
		case len(args) < n:
			return fmt.Errorf("%s: missing %s (%s); usage: %s", path,
				strings.Join(names[len(args):], " "), what, cmd.UseLine())
		case len(args) > n:
			return fmt.Errorf("%s: %d arguments, want %d (%s): %q is one too many; usage: %s", path,
				len(args), n, strings.Join(names, " "), args[n], cmd.UseLine())
		}
		return nil
	}
}

// What the commands' arguments are, for exactArgs.
const (
	argRun      = "a run id from `torchmem runs`, a unique prefix of one, or last"
	argSnapshot = "a memory snapshot pickle: torch.cuda.memory._dump_snapshot's, or one torchmem run --record-history kept"
)
