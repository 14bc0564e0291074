package estimate

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// TestEveryFamilyRegistered: every built-in model has an estimator family,
// every registered family has a built-in model (so TestEveryPresetEveryMode
// and TestNothingOutlivesTheJob walk it), and an unknown family is refused.
func TestEveryFamilyRegistered(t *testing.T) {
	seen := map[models.Family]bool{}
	for _, name := range models.PresetNames() {
		md, err := models.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := familyOf(md); err != nil {
			t.Error(err)
		}
		seen[md.Family] = true
	}
	for f := range families {
		if !seen[f] {
			t.Errorf("family %s has no built-in model (add a preset under models/presets)", f)
		}
	}
	if _, err := familyOf(&models.Model{Name: "m", Family: "mamba"}); err == nil || !strings.Contains(err.Error(), "mamba") {
		t.Errorf("unknown family: %v", err)
	}
}

// TestFamilyDecisions pins the pure decisions each family makes.
func TestFamilyDecisions(t *testing.T) {
	bf16, amp := dtypesFor("bf16"), dtypesFor("amp-bf16")
	for _, c := range []struct {
		fam                      models.Family
		generates, images, eager bool
		lossBF16                 int64 // loss tensors' element size in pure bf16
	}{
		{models.GPT2, true, false, false, 4},
		{models.Llama, true, false, false, 4},
		{models.BERT, false, false, false, 4},
		{models.T5, false, false, true, 2},
		{models.ViT, false, true, false, 4},
		{models.ResNet, false, true, false, 4},
		{models.MoE, true, false, false, 4},
		{models.Granite, true, false, false, 4},
	} {
		f := families[c.fam]
		if f == nil {
			t.Errorf("%s: not registered", c.fam)
			continue
		}
		if f.generates() != c.generates || f.images() != c.images || f.alwaysEager() != c.eager {
			t.Errorf("%s: generates %v images %v alwaysEager %v", c.fam, f.generates(), f.images(), f.alwaysEager())
		}
		if got := f.lossDT(bf16); got != c.lossBF16 {
			t.Errorf("%s: loss dtype in bf16 %d, want %d", c.fam, got, c.lossBF16)
		}
		if got := f.lossDT(amp); got != 4 {
			t.Errorf("%s: loss dtype under autocast %d, want 4", c.fam, got)
		}
		md := &models.Model{Family: c.fam, Layers: 6}
		if want := map[bool]int{true: 6, false: 0}[c.fam == models.T5]; f.decoderStart(md) != want {
			t.Errorf("%s: decoder starts at %d, want %d", c.fam, f.decoderStart(md), want)
		}
	}
}
