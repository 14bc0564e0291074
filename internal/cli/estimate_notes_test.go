package cli

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/i18n"
)

// TestEstimateNotesInLang: the fit notes the estimate package makes and
// the stderr notice about unused cache follow --lang; JSON keeps English.
func TestEstimateNotesInLang(t *testing.T) {
	for _, kind := range []estimate.Note{{Kind: estimate.NoteCacheReleases, Args: []int{3}},
		{Kind: estimate.NoteBatchIsland, Args: []int{12, 9}}} {
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
