package oomexplain

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// mixedLog builds size bytes of a mixed kernel + training log: noise lines
// in the shapes real logs have, and one real incident from testdata every
// 1 MiB (the same mix as bench/oomgen, in memory for the benchmark).
func mixedLog(tb testing.TB, size int) []byte { return mixedLogEvery(tb, size, 1<<20) }

// mixedLogEvery is mixedLog with one incident every `every` bytes.
func mixedLogEvery(tb testing.TB, size, every int) []byte {
	var incidents [][]byte
	for _, sub := range []string{"kernel", "cuda", "host"} {
		names, _ := filepath.Glob(filepath.Join("testdata", sub, "*"))
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				tb.Fatal(err)
			}
			incidents = append(incidents, append(b, '\n'))
		}
	}
	noise := []func(i int) string{
		func(i int) string {
			return fmt.Sprintf("[%6d.%06d] e1000e 0000:00:19.0 eth0: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: Rx/Tx\n", i%999999, i%1000000)
		},
		func(i int) string {
			return fmt.Sprintf("Epoch 3:  42%%|████▏     | %d/2000 [05:11<07:10,  2.75it/s, loss=2.31, lr=3.0e-04]\n", i%2000)
		},
		func(i int) string {
			return fmt.Sprintf("step %d | loss 2.4185 | lr 2.99e-04 | grad_norm 0.873 | tokens/s 412345 | mem 61.2GiB\n", i)
		},
		func(i int) string {
			return fmt.Sprintf("[%6d.%06d] audit: type=1400 audit(1764455211.123:%d): apparmor=\"STATUS\" operation=\"profile_load\" name=\"nvidia_modprobe\" pid=%d comm=\"apparmor_parser\"\n", i%999999, i%1000000, i, i)
		},
		func(i int) string {
			return fmt.Sprintf("wandb: logging step %d, error rate 0.0, retries 0\n", i)
		},
	}
	var buf bytes.Buffer
	next := 0
	for i := 0; buf.Len() < size; i++ {
		if buf.Len() >= next {
			buf.Write(incidents[i%len(incidents)])
			next += every
			continue
		}
		buf.WriteString(noise[i%len(noise)](i))
	}
	return buf.Bytes()
}

func BenchmarkParseMixed(b *testing.B) {
	log := mixedLog(b, 32<<20)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		incs, err := Parse(bytes.NewReader(log), Options{})
		if err != nil || len(incs) < 30 {
			b.Fatalf("%d incidents, %v", len(incs), err)
		}
	}
}

// BenchmarkParseDense: a log dense with incidents (one every 4 KiB: 8 192
// in 32 MiB), parsed, grouped and explained as `torchmem oom` does.
func BenchmarkParseDense(b *testing.B) {
	log := mixedLogEvery(b, 32<<20, 4<<10)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		incs, err := Parse(bytes.NewReader(log), Options{})
		if err != nil || len(incs) < 1000 {
			b.Fatalf("%d incidents, %v", len(incs), err)
		}
		ExplainAll(Group(incs), Context{})
	}
}
