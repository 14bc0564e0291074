package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/snapshot"
)

func newSnapshotHTMLCmd(env *Env) *cobra.Command {
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "html FILE -o OUT.html",
		Short: "Write one self-contained interactive page: zoomable timeline, segment map, stacks on hover",
		Long: `Write a single HTML file that needs no network to view: a zoomable timeline of
allocated and reserved memory (drag to zoom, double-click to reset) with OOMs and
annotations marked, the segment map at the snapshot with each block's stack on
hover, and the top allocation sites. Downsampling and grouping are done here, so
the page stays responsive for snapshots with millions of trace entries.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("missing -o OUT.html")
			}
			s, err := snapshotLoad(env, args[0])
			if err != nil {
				return err
			}
			f, err := os.Create(out)
			if err != nil {
				return err
			}
			st, err := snapshot.WriteHTML(f, s, snapshot.HTMLOptions{Title: args[0]})
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("write %s: %w", out, err)
			}
			if asJSON {
				return writeJSON(env.Stdout, map[string]any{"output": out, "page": st})
			}
			fmt.Fprintf(env.Stdout, "wrote %s (%d bytes: %d timeline points, %d blocks, %d stacks)\n",
				out, st.Bytes, st.Points, st.Blocks, st.Stacks)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "page to write")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was written as JSON")
	return cmd
}
