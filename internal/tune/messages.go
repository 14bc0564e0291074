package tune

import (
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// catalog holds the notes tune attaches to a plan's changes and a
// status's items. The JSON keeps their English (Note); the text the CLI
// prints reads NoteIn(lang).
var catalog = i18n.NewCatalog("tune", map[language.Tag]map[string]string{
	i18n.EN: {
		"note.one_numa_node": "one NUMA node",
		"note.enough":        "already enough (at least %[1]s)",
		"note.not_present":   "not present on this kernel",
		"note.not_offered":   "%[1]s not offered by this kernel",
		"note.live_drift":    "changed since apply (another tool, or a reboot before the persistence took over)",
		"note.file_drift":    "edited or removed since apply",
	},
	i18n.ZH: {
		"note.one_numa_node": "只有一个 NUMA 节点",
		"note.enough":        "已经足够（至少 %[1]s）",
		"note.not_present":   "此内核上不存在",
		"note.not_offered":   "此内核不提供 %[1]s",
		"note.live_drift":    "应用后已被改动（其他工具所改，或持久化生效之前重启过）",
		"note.file_drift":    "应用后已被编辑或删除",
	},
})

// note is a note's message id and its one argument (a value, or "").
type note struct{ id, arg string }

func (n note) in(lang language.Tag) string {
	if n.arg == "" {
		return catalog.Sprintf(lang, n.id)
	}
	return catalog.Sprintf(lang, n.id, n.arg)
}

func noteEN(id, arg string) string { return note{id, arg}.in(i18n.EN) }

func (c *Change) setNote(id, arg string) {
	c.note = note{id, arg}
	c.Note = c.note.in(i18n.EN)
}

// NoteIn is the change's note in lang ("" when it has none).
func (c Change) NoteIn(lang language.Tag) string {
	if c.note.id == "" {
		return c.Note
	}
	return c.note.in(lang)
}

// NoteIn is the item's note in lang.
func (it StatusItem) NoteIn(lang language.Tag) string {
	if it.note.id == "" {
		return it.Note
	}
	return it.note.in(lang)
}
