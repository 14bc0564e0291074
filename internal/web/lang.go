package web

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// The dashboard's language, per request: ?lang=zh|en on the page's URL
// (kept by its links), else the first of zh or en the browser's
// Accept-Language names, else the server's (serve --lang, else the
// locale). Only human text changes: the API's JSON is the same in both.
func (s *Server) pageLang(r *http.Request) language.Tag {
	if q := r.URL.Query().Get("lang"); q != "" {
		if tag, err := i18n.Parse(q); err == nil {
			return tag
		}
	}
	if tag, ok := acceptLang(r.Header.Get("Accept-Language")); ok {
		return tag
	}
	return i18n.Base(s.cfg.Lang)
}

// acceptLang is the first language of an Accept-Language header that the
// dashboard has (zh or en), by the header's q order; ok is false when it
// names neither.
func acceptLang(h string) (language.Tag, bool) {
	tags, _, err := language.ParseAcceptLanguage(h)
	if err != nil {
		return i18n.EN, false
	}
	for _, t := range tags {
		if b, _ := t.Base(); b.String() == "zh" || b.String() == "en" {
			return i18n.Base(t), true
		}
	}
	return i18n.EN, false
}

// fmtVerb is an explicit-index verb of a catalog text: %[1]s.
var fmtVerb = regexp.MustCompile(`%\[(\d+)\][sd]`)

// scriptText is the catalog's "js." texts in lang for the pages'
// scripts, their verbs written {1}, {2} (app.js T() fills them).
func scriptText(lang language.Tag) []byte {
	texts := messagesEN
	if i18n.Base(lang) == i18n.ZH {
		texts = messagesZH
	}
	out := map[string]string{}
	for id, text := range texts {
		if k, ok := strings.CutPrefix(id, "js."); ok {
			out[k] = strings.ReplaceAll(fmtVerb.ReplaceAllString(text, "{$1}"), "%%", "%")
		}
	}
	b, _ := json.Marshal(out) // strings only: cannot fail
	return b
}
