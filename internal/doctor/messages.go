package doctor

import (
	"strings"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// catalog holds every sentence doctor prints (messages_en.go,
// messages_zh.go). A finding keeps the ids and arguments of its title,
// why and fix, so the text report renders them in the reader's language
// while the Title/Why/Fix fields of the JSON stay English.
var catalog = i18n.NewCatalog("doctor", map[language.Tag]map[string]string{
	i18n.EN: messagesEN,
	i18n.ZH: messagesZH,
})

// msg is one catalog message with its arguments.
type msg struct {
	id   string
	args []any
}

// in renders m in lang ("" when m is unset).
func (m msg) in(lang language.Tag) string {
	if m.id == "" {
		return ""
	}
	args := make([]any, len(m.args))
	for i, a := range m.args {
		switch sub := a.(type) {
		case msg: // a word of the sentence that is itself translated
			a = sub.in(lang)
		case msgList:
			parts := make([]string, len(sub))
			for j, m := range sub {
				parts[j] = m.in(lang)
			}
			a = strings.Join(parts, catalog.Sprintf(lang, "list.sep"))
		}
		args[i] = a
	}
	return catalog.Sprintf(lang, m.id, i18n.Plain(args)...)
}

// msgList is an argument listing several messages ("a; b").
type msgList []msg

// word is a translated argument of another message ("unknown", "a GPU host").
func word(id string, args ...any) msg { return msg{id, args} }

// findingText is what a finding says, as messages: the English rendering
// fills Finding.Title, Why and Fix.
type findingText struct {
	title, why, fix msg
}

// en renders a message in English, the language of the JSON report.
func en(id string, args ...any) string { return msg{id, args}.in(i18n.EN) }

// titled sets the finding's title to message id.
func (f Finding) titled(id string, args ...any) Finding {
	f.text.title = msg{id, args}
	f.Title = en(id, args...)
	return f
}

func (f Finding) why(id string, args ...any) Finding {
	f.text.why = msg{id, args}
	f.Why = en(id, args...)
	return f
}

func (f Finding) fix(id string, args ...any) Finding {
	f.text.fix = msg{id, args}
	f.Fix = en(id, args...)
	return f
}

// evMsg adds evidence whose value is prose: message id with args.
func (f Finding) evMsg(source, id string, args ...any) Finding {
	f.Evidence = append(f.Evidence, Evidence{Source: source, Value: en(id, args...), value: msg{id, args}})
	return f
}

// local is e's source and value in lang.
func (e Evidence) local(lang language.Tag) (source, value string) {
	source, value = e.Source, e.Value
	if e.source.id != "" {
		source = e.source.in(lang)
	}
	if e.value.id != "" {
		value = e.value.in(lang)
	}
	return source, value
}

// local is f's title, why and fix in lang: the messages when f was made
// here, its English fields when it was read back from JSON.
func (f Finding) local(lang language.Tag) (title, why, fix string) {
	pick := func(m msg, s string) string {
		if m.id == "" {
			return s
		}
		return m.in(lang)
	}
	return pick(f.text.title, f.Title), pick(f.text.why, f.Why), pick(f.text.fix, f.Fix)
}
