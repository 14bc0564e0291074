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
		Short: "Write one self-contained viewer: active-memory timeline per allocation, segments over time, what is live at the peak",
		Long: `Write a single HTML file that needs no network to view, a viewer in place of
PyTorch's memory_viz: an active-memory timeline with one band per allocation
(hover for its size, category and full stack; click to pin it and see the
allocator's state at that entry; drag or wheel to zoom, a from/to filter,
double-click to reset), the segments over time, what is live at the peak by
category and by stack, the allocated/reserved chart with OOMs and annotations,
the segment map and the top allocation sites. Bands too thin to see are merged
and traces over 250,000 entries keep the bands around the peak, so the page
stays small and responsive for snapshots with millions of entries.`,
		Args: exactArgs(argSnapshot, "FILE"),
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
			fmt.Fprintln(env.Stdout, snapshotTr(env)("snap.html_wrote", out, st.Bytes, st.Points, st.Blocks, st.Stacks))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "page to write")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was written as JSON")
	return cmd
}
