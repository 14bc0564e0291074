package doctor

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/i18n"
)

// TestMessagesComplete: every message has its Chinese text with the same
// arguments, so a zh report never falls back to English.
func TestMessagesComplete(t *testing.T) {
	if m := catalog.Missing(); len(m) > 0 {
		t.Errorf("catalog incomplete:\n%s", strings.Join(m, "\n"))
	}
	if n := len(catalog.IDs()); n < 200 {
		t.Errorf("%d message ids: the catalog lost messages", n)
	}
}

// TestGoldenReportsZH: the text report of each fixture host in Chinese
// (testdata/<host>.zh.golden; -update rewrites), and the JSON report is the
// same bytes whatever language the text was printed in.
func TestGoldenReportsZH(t *testing.T) {
	for name, mk := range goldenHosts() {
		t.Run(name, func(t *testing.T) {
			h := mk(t)
			rep := Run(h, Checks())
			before, _ := json.Marshal(rep)
			var zh bytes.Buffer
			if err := WriteText(&zh, rep, true, i18n.ZH); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name+".zh.golden"), zh.Bytes())
			after, _ := json.Marshal(rep)
			if !bytes.Equal(before, after) || strings.ContainsFunc(string(after), func(r rune) bool { return r >= 0x4e00 && r <= 0x9fff }) {
				t.Errorf("the JSON report changed with the language")
			}
			for i, line := range strings.Split(zh.String(), "\n") {
				// Wrapped prose keeps to 80 columns; a title, evidence or a
				// single long command may run over, as in English.
				if strings.HasPrefix(line, "         原因") || strings.HasPrefix(line, "         修复") || strings.HasPrefix(line, "              ") {
					if w := i18n.Width(line); w > textWidth && strings.Contains(line, "，") {
						t.Errorf("line %d is %d columns: %q", i+1, w, line)
					}
				}
			}
		})
	}
}
