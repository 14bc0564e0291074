package i18n

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/text/language"
)

func testCatalog() *Catalog {
	return NewCatalog("test", map[language.Tag]map[string]string{
		EN: {"greet": "hello %[1]s, %[2]d jobs", "only.en": "x", "bad": "%[1]s"},
		ZH: {"greet": "%[2]d 个作业，你好 %[1]s", "bad": "%[1]d"},
	})
}

func TestSprintfPicksLanguageByBase(t *testing.T) {
	c := testCatalog()
	if got := c.Sprintf(EN, "greet", "li", 3); got != "hello li, 3 jobs" {
		t.Errorf("en: %q", got)
	}
	tw := language.MustParse("zh-TW")
	if got := c.Sprintf(tw, "greet", "li", 3); got != "3 个作业，你好 li" {
		t.Errorf("zh-TW: %q", got)
	}
	if got := c.Sprintf(language.French, "greet", "li", 3); got != "hello li, 3 jobs" {
		t.Errorf("fr falls back to en: %q", got)
	}
}

func TestMissingFindsGapsAndVerbMismatch(t *testing.T) {
	got := strings.Join(testCatalog().Missing(), "\n")
	for _, want := range []string{"only.en: no zh text", "bad: zh uses %[1]d, English %[1]s"} {
		if !strings.Contains(got, want) {
			t.Errorf("Missing() lacks %q:\n%s", want, got)
		}
	}
}

func TestLocale(t *testing.T) {
	for in, want := range map[string]language.Tag{
		"zh_CN.UTF-8": ZH, "zh_TW.Big5": ZH, "zh-Hans": ZH, "zh": ZH,
		"C": EN, "POSIX": EN, "en_US.UTF-8": EN, "": EN, "zhx": EN,
	} {
		if got := FromLocale(in); got != want {
			t.Errorf("FromLocale(%q) = %v, want %v", in, got, want)
		}
	}
	env := map[string]string{"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}
	if got := FromEnv(func(k string) string { return env[k] }); got != ZH {
		t.Errorf("LC_MESSAGES before LANG: %v", got)
	}
	if _, err := Parse("fr"); err == nil || !strings.Contains(err.Error(), `"fr"`) {
		t.Errorf("Parse(fr) = %v", err)
	}
}

func TestWidth(t *testing.T) {
	cases := []struct {
		s    string
		want int
	}{{"abc", 3}, {"显存", 4}, {"GPU 显存不足", 12}, {"\x1b[1mab\x1b[0m", 2}, {"é", 1}}
	for _, c := range cases {
		if got := Width(c.s); got != c.want {
			t.Errorf("Width(%q) = %d, want %d", c.s, got, c.want)
		}
	}
	if got := Cut("显存不足", 5); got != "显存…" || Width(got) > 5 {
		t.Errorf("Cut = %q", got)
	}
	if got := PadRight("显存", 6); got != "显存  " {
		t.Errorf("PadRight = %q", got)
	}
}

// The printable-ASCII fast path measures and cuts as x/ansi does.
func TestWidthASCIIFastPath(t *testing.T) {
	for _, s := range []string{"", "a", "/usr/bin/python3 train.py --epochs 3", "PID  ROLE", "~ !"} {
		if Width(s) != ansi.StringWidth(s) {
			t.Errorf("Width(%q) = %d, x/ansi %d", s, Width(s), ansi.StringWidth(s))
		}
		for n := 1; n <= len(s)+1; n++ {
			if got, want := Cut(s, n), ansi.Truncate(s, n, "…"); got != want {
				t.Errorf("Cut(%q, %d) = %q, x/ansi %q", s, n, got, want)
			}
		}
	}
}
