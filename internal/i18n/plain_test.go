package i18n

import (
	"testing"

	"golang.org/x/text/language"
)

// TestPlain: a setting printed through a catalog reads as in the file it
// came from (32768), not with the digit grouping x/text applies.
func TestPlain(t *testing.T) {
	c := NewCatalog("plain", map[language.Tag]map[string]string{
		EN: {"n": "pid_max %[1]d, %[2]d, %[3]x, %[4]v"},
		ZH: {"n": "pid_max 为 %[1]d，%[2]d，%[3]x，%[4]v"},
	})
	for tag, want := range map[language.Tag]string{EN: "pid_max 32768, 42, ff, 1546297", ZH: "pid_max 为 32768，42，ff，1546297"} {
		if got := c.Sprintf(tag, "n", Plain([]any{32768, int64(42), uint64(255), 1546297})...); got != want {
			t.Errorf("%v: %q, want %q", tag, got, want)
		}
	}
	if got := c.Sprintf(EN, "n", 32768, 42, 255, 1546297); got == "pid_max 32768, 42, ff, 1546297" {
		t.Errorf("x/text no longer groups digits; Plain may be unneeded: %q", got)
	}
}
