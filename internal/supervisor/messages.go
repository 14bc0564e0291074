package supervisor

import (
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// catalog holds the sentences of the live status line and of the
// post-mortem's frame (run, peaks, steps, evidence) in each language; the
// verdicts, arithmetic and recommendations come from internal/oomexplain's
// catalog. The summary kept with the run and its JSON stay English.
var catalog = i18n.NewCatalog("supervisor", map[language.Tag]map[string]string{
	i18n.EN: messagesEN,
	i18n.ZH: messagesZH,
})

// tr is the printer of lang, integers printed as fmt does.
func tr(lang language.Tag) func(id string, args ...any) string {
	t := catalog.T(lang)
	return func(id string, args ...any) string { return t(id, i18n.Plain(args)...) }
}

// lang is the language of the run's text for people (English unless set).
func (s *sup) lang() language.Tag {
	if s.cfg.Lang == language.Und {
		return i18n.EN
	}
	return s.cfg.Lang
}
