package cli

import (
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// The values of Env.Lang: the language of every human-facing text; JSON
// output is always English, so scripts never see it change.
const (
	langEN = "en"
	langZH = "zh"
)

// localeLang is the language the locale asks for (the first of LC_ALL,
// LC_MESSAGES and LANG that is set, i18n.FromEnv), as Env.Lang spells it.
func localeLang(getenv func(string) string) string {
	return langCode(i18n.FromEnv(getenv))
}

// langCode spells a tag as Env.Lang does: "zh" for any Chinese, else "en".
func langCode(tag language.Tag) string {
	if i18n.Base(tag) == i18n.ZH {
		return langZH
	}
	return langEN
}

// lang is the language tag of env's human text (English unless "zh").
func (env *Env) lang() language.Tag {
	if env.Lang == langZH {
		return i18n.ZH
	}
	return i18n.EN
}

// langFlag is --lang: it sets Env.Lang, whose default came from the
// locale. Its own default prints empty, so help and man pages do not
// depend on the locale they were generated under.
type langFlag struct {
	env *Env
	set bool
}

func (f *langFlag) String() string {
	if !f.set {
		return ""
	}
	return f.env.Lang
}

// Set reads zh or en (or a regional form: zh_CN, zh-TW, en_US).
func (f *langFlag) Set(s string) error {
	tag, err := i18n.Parse(s)
	if err != nil {
		return err
	}
	f.env.Lang, f.set = langCode(tag), true
	return nil
}

func (f *langFlag) Type() string { return "zh|en" }
