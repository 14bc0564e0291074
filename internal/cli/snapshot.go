package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/snapshot"
	"github.com/torchmem/torchmem/internal/tui"
)

func init() { register("snapshot", newSnapshotCmd) }

func newSnapshotCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Analyse PyTorch memory snapshots (torch.cuda.memory._dump_snapshot) safely and fast",
		Long: `Read PyTorch CUDA memory snapshot files natively: no Python, no pickle code
executed (only the data subset of the format is accepted), gzip-compressed files
read transparently, every format since torch 1.13. FILE may be - for stdin.`,
		Example: `  torchmem snapshot summary snap.pickle
  torchmem snapshot top --depth 3 snap.pickle
  torchmem snapshot timeline --csv snap.pickle > timeline.csv
  torchmem snapshot leaks snap.pickle.gz
  torchmem snapshot diff before.pickle after.pickle
  torchmem snapshot html snap.pickle -o snap.html`,
	}
	for _, sub := range []func(*Env) *cobra.Command{newSnapshotSummaryCmd, newSnapshotTopCmd,
		newSnapshotTimelineCmd, newSnapshotLeaksCmd, newSnapshotDiffCmd, newSnapshotHTMLCmd} {
		cmd.AddCommand(sub(env))
	}
	return cmd
}

// snapshotProgressMin is the file size above which a progress bar is
// drawn (only when stderr is a terminal).
const snapshotProgressMin = 64 << 20

// snapshotLoad reads a snapshot file, or stdin for "-".
func snapshotLoad(env *Env, name string) (*snapshot.Snapshot, error) {
	if name == "-" {
		s, err := snapshot.ReadAny(env.Stdin, -1)
		if err != nil {
			return nil, fmt.Errorf("read snapshot from stdin: %w", err)
		}
		return s, nil
	}
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	snapshotTuneGC(snapshotDecodedSize(name, st.Size()))
	var progress func(read, total int64)
	if st.Size() >= snapshotProgressMin && isTerminal(env.Stderr) {
		progress = snapshotProgressBar(env.Stderr, snapshotTr(env))
		defer fmt.Fprint(env.Stderr, "\r\033[K")
	}
	return snapshot.ReadFile(name, progress)
}

// snapshotTuneGC: the decoded snapshot is far smaller than the file and
// the decoder's garbage is short-lived, so collect less often, but keep
// the heap well under the file's size so reading never needs more memory
// than the file. GOGC or GOMEMLIMIT in the environment win.
func snapshotTuneGC(fileSize int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(max(fileSize/4*3, 256<<20))
	}
}

// snapshotDecodedSize estimates the uncompressed size of a snapshot file:
// its size, or for gzip the trailer's ISIZE (the size modulo 4 GiB), at
// least five times the compressed size.
func snapshotDecodedSize(name string, size int64) int64 {
	f, err := os.Open(name)
	if err != nil {
		return size
	}
	defer f.Close()
	var magic, trailer [4]byte
	if _, err := f.ReadAt(magic[:2], 0); err != nil || magic[0] != 0x1f || magic[1] != 0x8b || size < 18 {
		return size
	}
	if _, err := f.ReadAt(trailer[:], size-4); err != nil {
		return 5 * size
	}
	isize := int64(trailer[0]) | int64(trailer[1])<<8 | int64(trailer[2])<<16 | int64(trailer[3])<<24
	return max(isize, 5*size)
}

// snapshotProgressBar draws at most ten times a second.
func snapshotProgressBar(w io.Writer, t translate) func(read, total int64) {
	var last time.Time
	start := time.Now()
	return func(read, total int64) {
		if time.Since(last) < 100*time.Millisecond || total <= 0 {
			return
		}
		last = time.Now()
		frac := min(float64(read)/float64(total), 1)
		fmt.Fprintf(w, "\r%s %s %3.0f%% %.1fs", t("snap.reading"), tui.Bar(read, total, 30), frac*100, time.Since(start).Seconds())
	}
}

// snapshotSeconds formats a trace time offset.
func snapshotSeconds(us int64) string {
	return fmt.Sprintf("+%.3f s", float64(us)/1e6)
}
