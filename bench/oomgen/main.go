// Command oomgen writes a mixed kernel + training log of a given size to
// stdout, for benchmarking `torchmem oom` on inputs too big to commit.
// Noise lines are the common shapes of real logs (dmesg chatter, tqdm
// progress, training metrics, Python warnings that say "error"); every
// -every bytes one real incident from the parsers' testdata is inserted.
//
//	go run ./bench/oomgen -size 1G -testdata internal/oomexplain/testdata | torchmem oom --json -
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/torchmem/torchmem/internal/units"
)

// noise lines take two numbers each.
var noise = []string{
	"[%6d.%06d] e1000e 0000:00:19.0 eth0: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: Rx/Tx",
	"[%6d.%06d] audit: type=1400 audit(1764455211.123:42): apparmor=\"STATUS\" operation=\"profile_load\" profile=\"unconfined\" name=\"nvidia_modprobe\" pid=4242 comm=\"apparmor_parser\"",
	"Epoch 3:  42%%|████▏     | %d/2000 [05:11<07:10,  2.75it/s, loss=2.31, lr=3.0e-04] %d",
	"step %d | loss 2.4185 | lr 2.99e-04 | grad_norm 0.873 | tokens/s 412345 | mem 61.2GiB | %d",
	"/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:%d: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create. (%d)",
	"[%6d.%06d] nvidia-nvswitch0: open (major=511)",
	"wandb: logging step %d, error rate 0.0, retries 0, elapsed %d s",
	"[2026-11-29 10:%02d:%02d,221] torch.distributed.elastic.agent.server.api: [INFO] [default] Starting worker group",
}

func main() {
	sizeFlag := flag.String("size", "1G", "bytes to write (1G, 256M)")
	every := flag.String("every", "1M", "insert one real incident every this many bytes")
	dir := flag.String("testdata", "internal/oomexplain/testdata", "directory of real incident captures")
	flag.Parse()
	size, err1 := units.ParseBytes(*sizeFlag)
	step, err2 := units.ParseBytes(*every)
	if err1 != nil || err2 != nil || step <= 0 {
		fmt.Fprintln(os.Stderr, "oomgen: bad -size or -every")
		os.Exit(2)
	}
	incidents := loadIncidents(*dir)
	if len(incidents) == 0 {
		fmt.Fprintln(os.Stderr, "oomgen: no incidents under", *dir)
		os.Exit(2)
	}
	block := noiseBlock(int(min(step, 4<<20)))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	var written int64
	for i := 0; written < size; i++ {
		n, _ := w.Write(incidents[i%len(incidents)])
		written += int64(n)
		for left := step; left > 0 && written < size; left -= int64(len(block)) {
			n, _ = w.Write(block)
			written += int64(n)
		}
	}
}

// noiseBlock renders about size bytes of noise lines once; the generator
// repeats it between incidents so that it outruns the parser it feeds.
func noiseBlock(size int) []byte {
	var b []byte
	for i := 0; len(b) < size; i++ {
		b = fmt.Appendf(b, noise[i%len(noise)]+"\n", (i*7919)%999999, (i*104729)%1000000)
	}
	return b
}

func loadIncidents(dir string) [][]byte {
	var names []string
	for _, sub := range []string{"kernel", "cuda", "host"} {
		m, _ := filepath.Glob(filepath.Join(dir, sub, "*"))
		names = append(names, m...)
	}
	sort.Strings(names)
	var out [][]byte
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil && len(b) > 0 {
			if b[len(b)-1] != '\n' {
				b = append(b, '\n')
			}
			out = append(out, b)
		}
	}
	return out
}
