package tune

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/i18n"
)

func TestMessagesComplete(t *testing.T) {
	if m := catalog.Missing(); len(m) > 0 {
		t.Errorf("catalog incomplete:\n%s", strings.Join(m, "\n"))
	}
	c := Change{}
	c.setNote("note.not_offered", "madvise")
	if c.Note != "madvise not offered by this kernel" || c.NoteIn(i18n.ZH) != "此内核不提供 madvise" {
		t.Errorf("note: %q / %q", c.Note, c.NoteIn(i18n.ZH))
	}
}
