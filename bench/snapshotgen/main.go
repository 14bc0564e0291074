// Command snapshotgen writes a large PyTorch memory snapshot for benchmarks
// by replicating the trace entries of a real one, in the byte layout
// CPython's pickler produces (memoized frames, 64 KiB frames), so
// `torchmem snapshot` and `pickle.load` can be timed on the same file.
//
//	go run ./bench/snapshotgen -in train.pickle.gz -size 1G -o /tmp/big.pickle
//	go run ./bench/snapshotgen -in train.pickle.gz -size 300M -future -o /tmp/future.pickle
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/torchmem/torchmem/internal/snapshot"
	"github.com/torchmem/torchmem/internal/units"
)

func main() {
	in := flag.String("in", "", "real snapshot to replicate")
	out := flag.String("o", "", "output file")
	size := flag.String("size", "100M", "approximate output size")
	future := flag.Bool("future", false, "add an unknown nested dict to every trace entry")
	flag.Parse()
	if err := run(*in, *out, *size, *future); err != nil {
		fmt.Fprintln(os.Stderr, "snapshotgen:", err)
		os.Exit(1)
	}
}

func run(in, out, size string, future bool) error {
	want, err := units.ParseBytes(size)
	if err != nil {
		return err
	}
	s, err := snapshot.ReadFile(in, nil)
	if err != nil {
		return err
	}
	st, err := os.Stat(in)
	if err != nil {
		return err
	}
	// One copy of the trace costs about the input's size (gzip: ~20x).
	per := st.Size()
	if len(in) > 3 && in[len(in)-3:] == ".gz" {
		per *= 20
	}
	copies := max(int(want/per), 1)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	g := &gen{p: newPickler(w), s: s, copies: copies, frameMemo: map[snapshot.FrameID]int{}, future: future}
	g.top()
	if err := g.p.finish(); err != nil {
		return err
	}
	fi, _ := f.Stat()
	fmt.Printf("wrote %s: %d copies of %d trace entries, %d bytes\n", out, copies, len(s.Traces[0]), fi.Size())
	return nil
}
