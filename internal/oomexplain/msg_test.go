package oomexplain

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/language"
)

// TestMessagesComplete: every message id the rules name has English text,
// and every English text is used (a translation keyed by the same ids is
// then complete when it has every key).
func TestMessagesComplete(t *testing.T) {
	used := map[string]bool{}
	re := regexp.MustCompile(`\b(msg|msgOf|adviceMsg)\("([a-z0-9_.]+)"`)
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			id := m[2]
			if m[1] == "adviceMsg" {
				id = "advice." + id
			}
			used[id] = true
		}
	}
	for _, owner := range []string{"slurm", "kubernetes", "container", "systemd", "torchmem", "cgroup"} {
		used["advice.limit_owner."+owner] = true
	}
	delete(used, "advice.limit_owner.")
	delete(used, "advice.")
	delete(used, "run.verdict.")
	for _, c := range []string{"cgroup_oom_kill", "host_oom_kill", "cuda_oom", "dataloader_worker_killed"} {
		used["run.verdict."+c] = true
	}
	for id := range used {
		if _, ok := messagesEN[id]; !ok {
			t.Errorf("message %q has no English text", id)
		}
	}
	for id := range messagesEN {
		if !used[id] {
			t.Errorf("English text %q is never used", id)
		}
	}
	for tag, texts := range catalogs {
		catalogComplete(t, tag.String(), texts)
	}
}

// catalogComplete: texts has every English id and no other, each text
// uses exactly the English text's argument indexes (only as %[n]s), and
// the printer for the language renders it (no fallback to English).
func catalogComplete(t *testing.T, lang string, texts map[string]string) {
	t.Helper()
	tag := language.MustParse(lang)
	for id, en := range messagesEN {
		text, ok := texts[id]
		if !ok || strings.TrimSpace(text) == "" {
			t.Errorf("%s: message %q has no text", lang, id)
			continue
		}
		if got, want := argIndexes(t, lang+" "+id, text), argIndexes(t, "en "+id, en); got != want {
			t.Errorf("%s: message %q uses arguments %s, English %s", lang, id, got, want)
		}
		var args []string
		for i := 1; strings.Contains(en, fmt.Sprintf("%%[%d]s", i)); i++ {
			args = append(args, fmt.Sprintf("<%d>", i))
		}
		m := msg(id, args...)
		anyArgs := make([]any, len(args))
		for i, a := range args {
			anyArgs[i] = a
		}
		if got, want := render(tag, m), fmt.Sprintf(text, anyArgs...); got != want {
			t.Errorf("%s: message %q renders %q, want %q", lang, id, got, want)
		}
	}
	for id := range texts {
		if _, ok := messagesEN[id]; !ok {
			t.Errorf("%s: message %q has no English text", lang, id)
		}
	}
}

var verbRE = regexp.MustCompile(`%(\[(\d+)\])?.`)

// argIndexes is the sorted set of argument indexes of text ("1,2"; ""
// for none); a verb other than %[n]s (or %%) is an error.
func argIndexes(t *testing.T, where, text string) string {
	t.Helper()
	set := map[int]bool{}
	for _, m := range verbRE.FindAllStringSubmatch(text, -1) {
		switch {
		case m[0] == "%%":
		case m[2] == "" || !strings.HasSuffix(m[0], "s"):
			t.Errorf("%s: verb %q: want %%[n]s", where, m[0])
		default:
			n, _ := strconv.Atoi(m[2])
			set[n] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range len(text) + 1 {
		if set[n] {
			out = append(out, strconv.Itoa(n))
		}
	}
	return strings.Join(out, ",")
}

// noBadVerbs fails on a rendered text with a missing or extra argument.
func noBadVerbs(t *testing.T, where string, e *Explanation) {
	t.Helper()
	all := append([]string{e.Summary}, e.Arithmetic...)
	all = append(all, e.Recommendations...)
	for _, a := range e.Advice {
		all = append(all, a.Because)
	}
	for _, s := range all {
		if strings.Contains(s, "%!") {
			t.Errorf("%s: bad message rendering %q", where, s)
		}
	}
}

// TestArgJSON: a message with text, nested and list arguments survives
// a JSON round trip and renders the same.
func TestArgJSON(t *testing.T) {
	m := msgOf("run.verdict.with_victims", msg("run.verdict.ok"), listArg([]Msg{msg("run.victim.main", "5", "python3"), msg("run.victim.worker", "6", "python3")}, ", "))
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Msg
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	en := Languages()[0]
	for _, tag := range Languages() {
		if got, want := render(tag, back), render(tag, m); got != want {
			t.Errorf("%v: %q after the round trip, want %q", tag, got, want)
		}
	}
	if got := render(en, m); strings.Contains(got, "%!") {
		t.Errorf("rendered %q", got)
	}
}
