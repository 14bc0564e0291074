package oomexplain

import (
	"bytes"
	"os"
	"path/filepath"
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
		ExplainAll(incs, Context{})
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
