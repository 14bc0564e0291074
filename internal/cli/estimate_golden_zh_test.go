package cli

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var estimateUpdateZH = flag.Bool("update-estimate-zh", false, "rewrite testdata/estimate/golden-zh from the current output")

// TestEstimateGoldenZH pins the Chinese text of an estimate report and of
// the plan (the search after a job that does not fit, and --plan on one
// that does): labels, fit sentences, levers and plan rows, aligned by
// display width (-update-estimate-zh rewrites). Llama models only: the
// numbers then depend on the Llama walk, which the JSON goldens pin too.
func TestEstimateGoldenZH(t *testing.T) {
	for _, c := range []struct {
		golden string
		code   int
		args   []string
	}{
		{"report-llama-1b-fits.txt", 0, []string{"--model", "Llama-3.2-1B", "--batch", "4", "--seq", "1024", "--precision", "amp-bf16", "--gpu", "A100-80GB"}},
		{"plan-llama-1b-24gb.txt", 2, []string{"--model", "Llama-3.2-1B", "--batch", "16", "--accum", "2", "--seq", "2048",
			"--precision", "fp32", "--gpu-memory", "24GB"}},
		{"plan-llama-1b-fine-tune-t4.txt", 0, []string{"--model", "Llama-3.2-1B", "--batch", "2", "--seq", "512", "--precision", "bf16",
			"--gpu", "T4", "--fine-tune", "--plan"}},
	} {
		out, errOut, code := runCLI(t, append([]string{"--lang", "zh", "estimate"}, c.args...)...)
		if code != c.code {
			t.Fatalf("%v: code %d, want %d: %s", c.args, code, c.code, errOut)
		}
		path := filepath.Join("testdata", "estimate", "golden-zh", c.golden)
		if *estimateUpdateZH {
			_ = os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("%s changed:\n--- got\n%s--- want\n%s", c.golden, out, want)
		}
	}
}
