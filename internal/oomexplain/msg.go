package oomexplain

import (
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// Msg is one sentence of an explanation kept as a message id and its
// arguments, never as concatenated English: the rules decide which
// sentence and which figures, a printer for the reader's language renders
// them (messages_en.go holds the English text; a translation adds a file
// and touches no rule). Arguments are pre-formatted figures and names
// (sizes as PyTorch prints them, pids: x/text would otherwise group the
// digits of a pid, "19,335"), or sentences of their own rendered in the
// same language, so a Msg is the same in every language.
type Msg struct {
	ID   string `json:"id"`
	Args []Arg  `json:"args,omitempty"`
}

// Arg is one argument: a figure or name (Text), or a sentence (Msg), or
// a list of sentences joined by Sep. JSON: a string, or the Msg, or
// {"list": [...], "sep": ", "}.
type Arg struct {
	Text string
	Msg  *Msg
	List []Msg
	Sep  string
}

// MarshalJSON writes the argument as its text, its message or its list.
func (a Arg) MarshalJSON() ([]byte, error) {
	switch {
	case a.Msg != nil:
		return json.Marshal(a.Msg)
	case a.List != nil:
		return json.Marshal(struct {
			List []Msg  `json:"list"`
			Sep  string `json:"sep"`
		}{a.List, a.Sep})
	}
	return json.Marshal(a.Text)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (a *Arg) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &a.Text)
	}
	var v struct {
		ID   string `json:"id"`
		Args []Arg  `json:"args"`
		List []Msg  `json:"list"`
		Sep  string `json:"sep"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v.List != nil {
		a.List, a.Sep = v.List, v.Sep
		return nil
	}
	a.Msg = &Msg{ID: v.ID, Args: v.Args}
	return nil
}

// msg builds a Msg whose arguments are figures and names.
func msg(id string, args ...string) Msg {
	m := Msg{ID: id}
	for _, a := range args {
		m.Args = append(m.Args, Arg{Text: a})
	}
	return m
}

// msgOf builds a Msg whose arguments may be strings, Msgs or Args.
func msgOf(id string, args ...any) Msg {
	m := Msg{ID: id}
	for _, a := range args {
		switch v := a.(type) {
		case string:
			m.Args = append(m.Args, Arg{Text: v})
		case Msg:
			m.Args = append(m.Args, Arg{Msg: &v})
		case Arg:
			m.Args = append(m.Args, v)
		default:
			panic(fmt.Sprintf("oomexplain: argument of %s of type %T", id, a)) // a bug in this package
		}
	}
	return m
}

// listArg joins sentences with sep in the reader's language.
func listArg(ms []Msg, sep string) Arg { return Arg{List: ms, Sep: sep} }

// zero reports a Msg that was never set.
func (m Msg) zero() bool { return m.ID == "" }

// catalogs maps each language to its message texts (fmt verbs, with
// explicit argument indexes where a translation may reorder them). One tag
// per base language: render picks a catalog by base, so zh, zh-CN, zh-Hans
// and zh-TW all get the (Simplified) Chinese text.
var catalogs = map[language.Tag]map[string]string{
	language.English: messagesEN,
	language.Chinese: messagesZH,
}

// cat renders the messages (internal/i18n: printers built on the first
// explanation, a language picked by its base, English as the fallback).
var cat = i18n.NewCatalog("oomexplain", catalogs)

// Languages are the languages the explanations can be rendered in.
func Languages() []language.Tag {
	out := make([]language.Tag, 0, len(catalogs))
	for tag := range catalogs {
		out = append(out, tag)
	}
	return out
}

// render prints m in lang (English when lang has no catalog).
func render(lang language.Tag, m Msg) string {
	p := cat.Printer(lang)
	args := make([]any, len(m.Args))
	for i, a := range m.Args {
		switch {
		case a.Msg != nil:
			args[i] = render(lang, *a.Msg)
		case a.List != nil:
			args[i] = joinMsgs(lang, a.List, a.Sep)
		default:
			args[i] = a.Text
		}
	}
	return p.Sprintf(m.ID, args...)
}

// renderAll renders every message, skipping unset ones.
func renderAll(lang language.Tag, ms []Msg) []string {
	var out []string
	for _, m := range ms {
		if !m.zero() {
			out = append(out, render(lang, m))
		}
	}
	return out
}

// joinMsgs renders ms and joins them with sep (lists inside one sentence).
func joinMsgs(lang language.Tag, ms []Msg, sep string) string {
	return strings.Join(renderAll(lang, ms), sep)
}
