package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func init() { register("gen-docs", newGenDocsCmd) }

// newGenDocsCmd writes man pages and shell completions generated from the
// command tree itself, so packages ship documentation that cannot drift
// from the binary. Hidden: it is a packaging step, not a user command.
func newGenDocsCmd(env *Env) *cobra.Command {
	var manDir, complDir string
	cmd := &cobra.Command{
		Use:    "gen-docs",
		Short:  "Write man pages and shell completions (packaging)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root := cmd.Root()
			if manDir != "" {
				if err := genMan(root, manDir); err != nil {
					return err
				}
			}
			if complDir != "" {
				if err := genCompletions(root, complDir); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&manDir, "man", "", "directory for section-1 man pages")
	cmd.Flags().StringVar(&complDir, "completions", "", "directory for bash, zsh and fish completions")
	return cmd
}

func genMan(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	hdr := &doc.GenManHeader{Title: "TORCHMEM", Section: "1", Source: "torchmem " + Version}
	root.DisableAutoGenTag = true
	if err := doc.GenManTree(root, hdr, dir); err != nil {
		return fmt.Errorf("write man pages to %s: %w", dir, err)
	}
	return nil
}

func genCompletions(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	writers := map[string]func(string) error{
		"torchmem.bash": func(p string) error { return root.GenBashCompletionFileV2(p, true) },
		"_torchmem":     root.GenZshCompletionFile,
		"torchmem.fish": func(p string) error { return root.GenFishCompletionFile(p, true) },
	}
	for name, write := range writers {
		p := filepath.Join(dir, name)
		if err := write(p); err != nil {
			return fmt.Errorf("write completion %s: %w", p, err)
		}
	}
	return nil
}
