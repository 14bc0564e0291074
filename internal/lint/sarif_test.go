package lint

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Every rule's helpUri points at a heading that exists in docs/lint.md, by
// the anchor GitHub generates for it.
func TestSARIFHelpURIAnchorsExist(t *testing.T) {
	doc, err := os.ReadFile("../../docs/lint.md")
	if err != nil {
		t.Skipf("docs not beside the package: %v", err)
	}
	anchors := map[string]bool{}
	for _, l := range strings.Split(string(doc), "\n") {
		if h, ok := strings.CutPrefix(l, "### "); ok {
			anchors[strings.ToLower(strings.ReplaceAll(strings.TrimSpace(h), " ", "-"))] = true
		}
	}
	raw, _ := json.Marshal(SARIF(nil, "test"))
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID      string `json:"id"`
						HelpURI string `json:"helpUri"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(raw, &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("sarif: %v", err)
	}
	for _, r := range log.Runs[0].Tool.Driver.Rules {
		_, frag, _ := strings.Cut(r.HelpURI, "#")
		if !anchors[frag] {
			t.Errorf("%s: helpUri %s matches no heading of docs/lint.md", r.ID, r.HelpURI)
		}
	}
}
