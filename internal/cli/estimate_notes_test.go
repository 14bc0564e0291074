package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/i18n"
)

// TestEstimateNotesInLang: the fit notes the estimate package makes and
// the stderr notice about unused cache follow --lang; JSON keeps English.
func TestEstimateNotesInLang(t *testing.T) {
	for _, kind := range []estimate.Note{{Kind: estimate.NoteCacheReleases, Args: []int{3}},
		{Kind: estimate.NoteBatchIsland, Args: []int{12, 9}}, {Kind: estimate.NoteLimitReleases, Args: []int{4}}} {
		en := fitNote(estimateCatalog.T(i18n.EN), kind)
		zh := fitNote(estimateCatalog.T(i18n.ZH), kind)
		if strings.HasPrefix(en, "estimate.note.") || strings.HasPrefix(zh, "estimate.note.") || en == zh {
			t.Errorf("%s: en %q, zh %q: want a message in each language", kind.Kind, en, zh)
		}
		for _, a := range kind.Args {
			if !strings.Contains(zh, itoa(a)) {
				t.Errorf("%s: zh %q lacks %d", kind.Kind, zh, a)
			}
		}
	}
	// A QLoRA run without a GPU leaves cache unused at the end: the notice.
	args := []string{"estimate", "--model", "mistralai/Mistral-7B-v0.1", "--batch", "4", "--seq", "4096",
		"--precision", "amp-fp16", "--attention", "flash", "--peft", "qlora"}
	_, errs, code := runCLI(t, append(args, "--lang", "zh")...)
	if code != 0 || !strings.Contains(errs, "提示") || strings.Contains(errs, "notice") {
		t.Errorf("--lang zh: code %d, stderr %q: want the Chinese notice", code, errs)
	}
	_, errs, _ = runCLI(t, append(args, "--lang", "en")...)
	if !strings.Contains(errs, "torchmem: notice:") {
		t.Errorf("--lang en: stderr %q: want the English notice", errs)
	}
}

// TestEstimateOlderLossNotice: a config.json that transformers 4.40
// wrote says so (its causal-LM loss copied the shifted logits, which
// --transformers models); not once --transformers is given, not for a
// config of 4.49 or later, not in inference.
func TestEstimateOlderLossNotice(t *testing.T) {
	dir := t.TempDir()
	write := func(v string) string {
		p := filepath.Join(dir, "config-"+v+".json")
		c := `{"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 1000, "n_positions": 256,
			"n_embd": 64, "n_layer": 2, "n_head": 4, "transformers_version": "` + v + `"}`
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old, cur := write("4.40.0"), write("4.56.2")
	for _, c := range []struct {
		args   []string
		notice bool
	}{
		{[]string{"--config", old}, true},
		{[]string{"--config", old, "--transformers", "4.40.0"}, false},
		{[]string{"--config", old, "--inference"}, false},
		{[]string{"--config", cur}, false},
	} {
		_, errs, code := runCLI(t, append([]string{"estimate", "--batch", "2", "--seq", "128"}, c.args...)...)
		if code != 0 || strings.Contains(errs, "--transformers 4.40.0") != c.notice {
			t.Errorf("%v: code %d, stderr %q: want the notice %v", c.args, code, errs, c.notice)
		}
	}
}
