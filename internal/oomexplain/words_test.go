package oomexplain

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/kmsg"
)

// parseWords parses b with the parsers' short paths (lineWords), or,
// with allWords, with every line through every parser's whole chain.
func parseWords(b []byte, allWords bool) Result {
	p := NewParser(Options{})
	p.allWords = allWords
	sc := kmsg.NewScanner(bytes.NewReader(b), p.opts.MaxLine)
	for sc.Scan() {
		p.FeedBytes(sc.Bytes())
	}
	return Result{Incidents: p.Close(), Dropped: p.Dropped()}
}

func sameWithoutWords(t *testing.T, name string, b []byte) {
	t.Helper()
	fast, slow := parseWords(b, false), parseWords(b, true)
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s: the short paths change the result: %d incidents, %d without them", name, len(fast.Incidents), len(slow.Incidents))
	}
}

func wordInputs(t testing.TB) map[string][]byte {
	in := map[string][]byte{}
	for _, pattern := range []string{"kernel/*", "cuda/*", "host/*", "corpus/*/*"} {
		names, _ := filepath.Glob(filepath.Join("testdata", pattern))
		for _, n := range names {
			if b, err := os.ReadFile(n); err == nil {
				in[n] = b
			}
		}
	}
	return in
}

// TestWordsSameResult: the short paths taken by lines without a kind's
// words give what the whole chains give, on every excerpt alone, on all
// of them one after the other with and without noise between, and on
// the benchmarks' dense log.
func TestWordsSameResult(t *testing.T) {
	in := wordInputs(t)
	var all, spaced bytes.Buffer
	noise := "step 12 | loss 2.41 | lr 3e-4 | mem 61.2GiB\n[  12.345678] e1000e eth0: NIC Link is Up\n"
	for i, name := range slices.Sorted(maps.Keys(in)) {
		b := in[name]
		sameWithoutWords(t, name, b)
		all.Write(b)
		spaced.Write(b)
		spaced.WriteString(strings.Repeat(noise, i%97))
	}
	sameWithoutWords(t, "all excerpts", all.Bytes())
	sameWithoutWords(t, "all excerpts with noise", spaced.Bytes())
	sameWithoutWords(t, "dense log", mixedLogEvery(t, 4<<20, 4<<10))
	sameWithoutWords(t, "denser log", mixedLogEvery(t, 1<<20, 512))
}

// FuzzWords: the same on arbitrary input.
func FuzzWords(f *testing.F) {
	for _, b := range wordInputs(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameWithoutWords(t, "fuzz", b)
	})
}
