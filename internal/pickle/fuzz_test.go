package pickle

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode: any input decodes or fails with an error; never a panic,
// never unbounded memory.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.pickle")
	bad, _ := filepath.Glob("testdata/malformed/*.pickle")
	files = append(files, bad...)
	for _, p := range files {
		b, _ := os.ReadFile(p)
		if len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte("\x80\x02cos\nsystem\n."))
	f.Add([]byte("\x80\x04]\x94(h\x00h\x00e."))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, known := range []bool{true, false} {
			d, v, err := decodeBytes(t, b, known)
			if err == nil {
				_, _ = d.ToAny(v, 64)
			}
		}
	})
}
