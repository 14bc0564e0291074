package lint

import (
	"strings"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// catalog holds every sentence lint prints: the findings' messages
// (messages_en.go, messages_zh.go) and each rule's summary and fix, whose
// English is the rule table's own text (rules.go) so that the JSON, SARIF
// and the catalog cannot drift apart.
var catalog = i18n.NewCatalog("lint", map[language.Tag]map[string]string{
	i18n.EN: withRuleTexts(messagesEN),
	i18n.ZH: messagesZH,
})

// withRuleTexts adds rule.<ID>.summary and rule.<ID>.fix from allRules
// (a literal % doubled: catalog texts are format strings).
func withRuleTexts(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+2*len(allRules))
	for k, v := range m {
		out[k] = v
	}
	esc := strings.NewReplacer("%", "%%")
	for _, r := range allRules {
		out[ruleSummaryID(r.ID)] = esc.Replace(r.Summary)
		out[ruleFixID(r.ID)] = esc.Replace(r.Fix)
	}
	return out
}

func ruleSummaryID(id string) string { return "rule." + id + ".summary" }
func ruleFixID(id string) string     { return "rule." + id + ".fix" }

// msg is one catalog message with its arguments; an argument that is a
// msg is rendered in the same language (a translated word or clause).
type msg struct {
	id   string
	args []any
}

func word(id string, args ...any) msg { return msg{id, args} }

// in renders m in lang.
func (m msg) in(lang language.Tag) string {
	args := make([]any, len(m.args))
	for i, a := range m.args {
		if sub, ok := a.(msg); ok {
			a = sub.in(lang)
		}
		args[i] = a
	}
	return catalog.Sprintf(lang, m.id, i18n.Plain(args)...)
}

// findingText is a finding's message and fix as catalog messages.
type findingText struct {
	msg, fix msg
}

// setFix replaces the finding's fix (a version-specific one).
func (f *Finding) setFix(id string, args ...any) {
	if f.text == nil {
		f.text = &findingText{}
	}
	f.text.fix = word(id, args...)
	f.Fix = f.text.fix.in(i18n.EN)
}

// setMessage replaces the finding's message.
func (f *Finding) setMessage(id string, args ...any) {
	if f.text == nil {
		f.text = &findingText{}
	}
	f.text.msg = word(id, args...)
	f.Message = f.text.msg.in(i18n.EN)
}

// Text is the finding's message and fix in lang (English for a finding
// that was not made here, such as one read back from JSON).
func (f Finding) Text(lang language.Tag) (message, fix string) {
	if f.text == nil {
		return f.Message, f.Fix
	}
	message, fix = f.Message, f.Fix
	if f.text.msg.id != "" {
		message = f.text.msg.in(lang)
	}
	if f.text.fix.id != "" {
		fix = f.text.fix.in(lang)
	}
	return message, fix
}

// Text is the rule's summary and fix in lang.
func (r Rule) Text(lang language.Tag) (summary, fix string) {
	return word(ruleSummaryID(r.ID)).in(lang), word(ruleFixID(r.ID)).in(lang)
}

// howMsg translates how a per-sample attribute is built (perSampleValue):
// the phrases are words, a function name or a method stays code.
func howMsg(how string) msg {
	switch {
	case how == "a list comprehension":
		return word("how.list_comp")
	case how == "a dict comprehension":
		return word("how.dict_comp")
	case how == "a dict filled in a loop":
		return word("how.dict_loop")
	case strings.HasPrefix(how, "loaded with "):
		return word("how.loaded", strings.TrimPrefix(how, "loaded with "))
	}
	return word("plain", how)
}

// label is a word of the text report ("fix: ").
func label(lang language.Tag, id string) string { return catalog.Sprintf(lang, id) }
