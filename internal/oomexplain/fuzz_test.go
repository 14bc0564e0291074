package oomexplain

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func addSeeds(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
}

// checkBounds fails on an incident that breaks the parser's limits.
func checkBounds(t *testing.T, incs []Incident) {
	for _, inc := range incs {
		if len(inc.Raw) > 64+8 || inc.Kernel != nil && len(inc.Kernel.Tasks) > 16 {
			t.Fatalf("unbounded incident: %d raw lines", len(inc.Raw))
		}
		for _, r := range inc.Raw {
			if len(r) > 16<<10+1 {
				t.Fatalf("raw line of %d bytes", len(r))
			}
		}
	}
}

// FuzzParse drives all parsers through the public entry point.
func FuzzParse(f *testing.F) {
	addSeeds(f, "kernel")
	addSeeds(f, "cuda")
	addSeeds(f, "host")
	f.Fuzz(func(t *testing.T, b []byte) {
		incs, err := Parse(bytes.NewReader(b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkBounds(t, incs)
		incs = Group(incs)
		ExplainAll(incs, Context{})
		for _, inc := range incs {
			noBadVerbs(t, "fuzz", inc.Explanation)
		}
	})
}

// FuzzCUDARules drives the CUDA decision ladder with arbitrary figures
// (-1 is unknown): it always decides, never names its own verdict as an
// alternative, and renders every message with its arguments.
func FuzzCUDARules(f *testing.F) {
	f.Add(int64(1503238554), int64(150109106995), int64(143312321249), int64(2619930050), int64(3371549327), int64(6786048328), int64(6002216796), uint8(2))
	f.Add(int64(20<<20), int64(16<<30), int64(5<<20), int64(14<<30), int64(1<<30), int64(-1), int64(-1), uint8(0))
	f.Add(int64(320<<20), int64(24<<30), int64(3<<20), int64(7<<30), int64(-1), int64(-1), int64(-1), uint8(3))
	formats := []string{"pre-2.1", "2.1", "2.2+", "cudaMallocAsync", "hook", ""}
	f.Fuzz(func(t *testing.T, req, total, free, alloc, unalloc, proc, allowed int64, fi uint8) {
		c := &CUDAOOM{Format: formats[int(fi)%len(formats)]}
		for _, p := range []struct {
			dst **int64
			v   int64
		}{{&c.RequestedBytes, req}, {&c.TotalBytes, total}, {&c.FreeBytes, free}, {&c.AllocatedBytes, alloc},
			{&c.ReservedUnallocatedBytes, unalloc}, {&c.ProcessBytes, proc}, {&c.AllowedBytes, allowed}} {
			if p.v >= 0 && p.v < 1<<50 {
				v := p.v
				*p.dst = &v
			}
		}
		inc := Incident{Kind: KindCUDAOOM, CUDA: c}
		e := Explain(&inc, Context{})
		if e.Verdict == "" || slices.Contains(e.Alternatives, e.Verdict) {
			t.Fatalf("verdict %q alternatives %v", e.Verdict, e.Alternatives)
		}
		noBadVerbs(t, "cuda rules", &e)
	})
}

// FuzzKernel feeds kernel report lines only to the kernel parser.
func FuzzKernel(f *testing.F) {
	addSeeds(f, "kernel")
	f.Fuzz(func(t *testing.T, b []byte) {
		p := NewParser(Options{})
		p.kinds = []kindParser{newKernelParser(p)}
		for _, l := range bytes.Split(b, []byte("\n")) {
			p.FeedBytes(l)
		}
		incs := p.Close()
		checkBounds(t, incs)
		for i := range incs {
			explainKernel(&incs[i], Context{})
		}
	})
}

// FuzzCUDAMessage checks the message parser and its rules on any text.
func FuzzCUDAMessage(f *testing.F) {
	addSeeds(f, "cuda")
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		for _, k := range []Kind{KindCUDAOOM, KindCUDAMallocAsync, KindCUDAError, KindNCCLOOM} {
			c := parseCUDAMessage(k, s)
			if len(c.Message) > maxMessage {
				t.Fatalf("message of %d bytes", len(c.Message))
			}
			inc := Incident{Kind: k, CUDA: c}
			explainCUDA(&inc, Context{})
		}
	})
}

// FuzzHost feeds lines only to the host-failure parser.
func FuzzHost(f *testing.F) {
	addSeeds(f, "host")
	f.Fuzz(func(t *testing.T, b []byte) {
		p := NewParser(Options{})
		p.kinds = []kindParser{newHostParser(p)}
		for _, l := range strings.Split(string(b), "\n") {
			p.FeedBytes([]byte(l))
		}
		incs := p.Close()
		checkBounds(t, incs)
		ExplainAll(incs, Context{})
	})
}
