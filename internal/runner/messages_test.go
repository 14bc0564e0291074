package runner

import (
	"strings"
	"testing"

	"golang.org/x/text/language"
)

func TestMessagesComplete(t *testing.T) {
	if m := catalog.Missing(); len(m) > 0 {
		t.Errorf("catalog incomplete:\n%s", strings.Join(m, "\n"))
	}
	if got := say(language.Und, "scope", 1000); !strings.Contains(got, "uid 1000;") {
		t.Errorf("English notice: %q", got)
	}
	if got := say(language.Chinese, "scope", 1000); !strings.Contains(got, "uid 1000 没有可写的内存 cgroup") {
		t.Errorf("Chinese notice: %q", got)
	}
}
