package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/estimate/models"
)

// estimateCheckFlags refuses flags the estimate would otherwise ignore or
// quietly replace: an explicit 0 for a count (the estimate reads 0 as
// "unset" and uses 1), --seq for an image model and --image-size for a
// language model.
func estimateCheckFlags(cmd *cobra.Command, md *models.Model) error {
	fl := cmd.Flags()
	for _, name := range []string{"batch", "accum", "world-size"} {
		if !fl.Changed(name) {
			continue
		}
		if n, err := fl.GetInt(name); err == nil && n < 1 {
			return fmt.Errorf("--%s %d: want 1 or more", name, n)
		}
	}
	vision := estimate.Images(md)
	if vision && fl.Changed("seq") {
		return fmt.Errorf("--seq applies to language models; %s is an image model: give --image-size", md.Name)
	}
	if !vision && fl.Changed("image-size") {
		return fmt.Errorf("--image-size applies to image models; %s is a language model: give --seq", md.Name)
	}
	return nil
}
