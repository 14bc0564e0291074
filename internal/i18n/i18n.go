// Package i18n renders torchmem's human-facing text in the reader's
// language. Each package that prints sentences keeps its own catalog (a
// file of English texts and one of Chinese texts keyed by message id) and
// renders through it; golang.org/x/text/message does the formatting and
// plural-free lookup, so no command keeps string maps of its own logic.
// JSON output never goes through a catalog: scripts see one language.
//
// The package is a leaf: it imports only x/text.
package i18n

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/message/catalog"
)

// The languages torchmem speaks. One tag per base language: a catalog is
// chosen by base, so zh, zh-CN, zh-Hans and zh-TW all get the Simplified
// Chinese text (the field guides users learn from are written in it).
var (
	EN = language.English
	ZH = language.Chinese
)

// Catalog is one package's messages: for each language, id → text with
// fmt verbs (explicit indexes, %[1]s, where a translation reorders them).
// Printers are built on first use, not at start-up: every command links
// every catalog and building one costs about half a millisecond.
type Catalog struct {
	name     string
	texts    map[language.Tag]map[string]string
	printers func() map[language.Tag]*message.Printer
}

// NewCatalog makes the catalog called name (used in panics and test
// failures) from the English texts and their translations.
func NewCatalog(name string, texts map[language.Tag]map[string]string) *Catalog {
	c := &Catalog{name: name, texts: texts}
	c.printers = sync.OnceValue(c.build)
	return c
}

func (c *Catalog) build() map[language.Tag]*message.Printer {
	b := catalog.NewBuilder(catalog.Fallback(EN))
	for tag, texts := range c.texts {
		for id, text := range texts {
			if err := b.SetString(tag, id, text); err != nil {
				panic(fmt.Sprintf("i18n: %s: message %s: %v", c.name, id, err)) // a bad literal in that package
			}
		}
	}
	out := map[language.Tag]*message.Printer{}
	for tag := range c.texts {
		out[tag] = message.NewPrinter(tag, message.Catalog(b))
	}
	return out
}

// Printer is lang's printer, or its base language's (zh-TW → zh), or
// English's when the catalog has neither.
func (c *Catalog) Printer(lang language.Tag) *message.Printer {
	ps := c.printers()
	if p, ok := ps[lang]; ok {
		return p
	}
	if p, ok := ps[Base(lang)]; ok {
		return p
	}
	return ps[EN]
}

// Sprintf renders message id with args in lang. An id missing from the
// catalog is printed as the id itself (TestComplete-style checks in each
// package keep that from shipping).
func (c *Catalog) Sprintf(lang language.Tag, id string, args ...any) string {
	return c.Printer(lang).Sprintf(id, args...)
}

// T is Sprintf bound to one language: packages keep a `t := cat.T(lang)`
// and write t("doctor.title", x).
func (c *Catalog) T(lang language.Tag) func(id string, args ...any) string {
	p := c.Printer(lang)
	return func(id string, args ...any) string { return p.Sprintf(id, args...) }
}

// Base maps a tag to the language torchmem has for it: ZH for any
// Chinese tag, EN for everything else.
func Base(lang language.Tag) language.Tag {
	if b, conf := lang.Base(); conf != language.No {
		if zb, _ := ZH.Base(); b == zb {
			return ZH
		}
	}
	return EN
}

// Parse reads a --lang value: "zh" or "en" (and their regional forms,
// zh_CN, zh-TW, en_US). Anything else is an error naming the value.
func Parse(s string) (language.Tag, error) {
	switch FromLocale(s) {
	case ZH:
		return ZH, nil
	}
	base := strings.ToLower(s)
	if i := strings.IndexAny(base, "_-.@"); i >= 0 {
		base = base[:i]
	}
	if base == "en" {
		return EN, nil
	}
	return EN, fmt.Errorf("language %q: want zh or en", s)
}

// FromLocale is ZH for a Chinese POSIX locale (zh, zh_CN.UTF-8,
// zh_TW.Big5, zh-Hans) and EN for anything else (C, POSIX, en_US.UTF-8).
func FromLocale(locale string) language.Tag {
	base := strings.ToLower(locale)
	if i := strings.IndexAny(base, "_-.@"); i >= 0 {
		base = base[:i]
	}
	if base == "zh" {
		return ZH
	}
	return EN
}

// FromEnv is the language the environment asks for: the first of LC_ALL,
// LC_MESSAGES and LANG that is set (the POSIX order). getenv is injected
// (os.Getenv in commands) so tests do not depend on the caller's locale.
func FromEnv(getenv func(string) string) language.Tag {
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(k); v != "" {
			return FromLocale(v)
		}
	}
	return EN
}

// Missing lists, for each language other than English, the ids English
// has and it lacks, and the ids whose explicit argument indexes differ
// from English's: what a package's completeness test reports. Empty
// means every message exists in every language with the same arguments.
func (c *Catalog) Missing() []string {
	en := c.texts[EN]
	var out []string
	for tag, texts := range c.texts {
		if tag == EN {
			continue
		}
		for id, text := range en {
			tr, ok := texts[id]
			switch {
			case !ok || strings.TrimSpace(tr) == "":
				out = append(out, fmt.Sprintf("%s: %s: no %s text", c.name, id, tag))
			case verbs(tr) != verbs(text):
				out = append(out, fmt.Sprintf("%s: %s: %s uses %s, English %s", c.name, id, tag, verbs(tr), verbs(text)))
			}
		}
		for id := range texts {
			if _, ok := en[id]; !ok {
				out = append(out, fmt.Sprintf("%s: %s: %s text without English", c.name, id, tag))
			}
		}
	}
	sort.Strings(out)
	return out
}

// IDs are the catalog's message ids, sorted.
func (c *Catalog) IDs() []string {
	var out []string
	for id := range c.texts[EN] {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// verbs is the sorted set of a text's formatting verbs with their
// argument index ("%[1]s %[2]d"): a translation may reorder arguments but
// must use each one, with the same verb. Unindexed verbs are numbered in
// order, as fmt does.
func verbs(text string) string {
	var vs []string
	n := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '%' {
			continue
		}
		j := i + 1
		if j < len(text) && text[j] == '%' {
			i = j
			continue
		}
		idx := ""
		if j < len(text) && text[j] == '[' {
			k := strings.IndexByte(text[j:], ']')
			if k < 0 {
				break
			}
			idx = text[j+1 : j+k]
			j += k + 1
			fmt.Sscan(idx, &n)
		} else {
			n++
			idx = fmt.Sprint(n)
		}
		for j < len(text) && strings.IndexByte("+-# 0123456789.*", text[j]) >= 0 {
			j++
		}
		if j < len(text) {
			vs = append(vs, "%["+idx+"]"+string(text[j]))
		}
		i = j
	}
	sort.Strings(vs)
	vs = dedupe(vs)
	return strings.Join(vs, " ")
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
