package cli

import (
	"fmt"
	"strings"

	"golang.org/x/text/language"
)

// The languages of explanations (`torchmem oom`, run's post-mortem); JSON
// output is always English, so scripts never see it change.
const (
	langEN = "en"
	langZH = "zh"
)

// localeLang is the language the locale asks for: the first of LC_ALL,
// LC_MESSAGES and LANG that is set (the POSIX order), read by
// localeLangOf.
func localeLang(getenv func(string) string) string {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(k); v != "" {
			return localeLangOf(v)
		}
	}
	return langEN
}

// localeLangOf is "zh" for a Chinese locale (zh, zh_CN.UTF-8,
// zh_TW.UTF-8, zh-Hans; the Simplified text serves all of them) and "en"
// for anything else (C, POSIX, en_US.UTF-8).
func localeLangOf(locale string) string {
	base := strings.ToLower(locale)
	if i := strings.IndexAny(base, "_-.@"); i >= 0 {
		base = base[:i]
	}
	if base == langZH {
		return langZH
	}
	return langEN
}

// lang is the language tag of env's explanations (English unless "zh").
func (env *Env) lang() language.Tag {
	if env.Lang == langZH {
		return language.Chinese
	}
	return language.English
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

func (f *langFlag) Set(s string) error {
	if s != langZH && s != langEN {
		return fmt.Errorf("want zh or en")
	}
	f.env.Lang, f.set = s, true
	return nil
}

func (f *langFlag) Type() string { return "zh|en" }
