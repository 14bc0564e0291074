package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocaleLang(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "en"},
		{map[string]string{"LANG": "zh_CN.UTF-8"}, "zh"},
		{map[string]string{"LANG": "zh_TW.UTF-8"}, "zh"},
		{map[string]string{"LANG": "zh"}, "zh"},
		{map[string]string{"LANG": "zh_CN.GB18030"}, "zh"},
		{map[string]string{"LANG": "zh_HK@big5"}, "zh"},
		{map[string]string{"LANG": "ZH_cn.utf8"}, "zh"},
		{map[string]string{"LANG": "en_US.UTF-8"}, "en"},
		{map[string]string{"LANG": "C.UTF-8"}, "en"},
		{map[string]string{"LANG": "POSIX"}, "en"},
		{map[string]string{"LANG": "zu_ZA.UTF-8"}, "en"}, // Zulu, not zh
		{map[string]string{"LANG": "zhx"}, "en"},
		{map[string]string{"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"},
		{map[string]string{"LC_MESSAGES": "C", "LANG": "zh_CN.UTF-8"}, "en"},
		{map[string]string{"LC_ALL": "zh_CN.UTF-8", "LC_MESSAGES": "C", "LANG": "en_US.UTF-8"}, "zh"},
		{map[string]string{"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "en"},
		{map[string]string{"LC_ALL": "", "LC_MESSAGES": "", "LANG": "zh_TW.UTF-8"}, "zh"}, // set but empty: the next
	} {
		if got := localeLang(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
}

// langOom runs `torchmem ARGS FILE` with the locale's language loc.
func langOom(t *testing.T, loc string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := DefaultEnv()
	env.Lang = localeLang(func(k string) string {
		if k == "LANG" {
			return loc
		}
		return ""
	})
	env.Stdout, env.Stderr, env.Stdin = &out, &errb, strings.NewReader("")
	file := filepath.Join(oomTestdata, "cuda/cuda-oom-fragmentation-message.txt")
	code := Run(env, append(args, file))
	return out.String(), errb.String(), code
}

// TestLangFlag: --lang and the locale pick the language of oom's text;
// --json is the same in every language.
func TestLangFlag(t *testing.T) {
	const zhText, enText = "显存碎片 (fragmentation)", "the cache is fragmented"
	for _, c := range []struct {
		loc  string
		args []string
		want string
	}{
		{"zh_CN.UTF-8", []string{"oom"}, zhText},
		{"en_US.UTF-8", []string{"oom"}, enText},
		{"en_US.UTF-8", []string{"--lang", "zh", "oom"}, zhText},
		{"zh_TW.UTF-8", []string{"--lang=en", "oom"}, enText},
		{"C", []string{"oom", "--lang", "zh"}, zhText},
	} {
		out, errs, code := langOom(t, c.loc, c.args...)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("LANG=%s %v: code %d, want %q in\n%s%s", c.loc, c.args, code, c.want, out, errs)
		}
	}
	zh, _, _ := langOom(t, "zh_CN.UTF-8", "--lang", "zh", "oom", "--json")
	en, _, _ := langOom(t, "C", "oom", "--json")
	if zh != en || !strings.Contains(en, enText) {
		t.Errorf("--json changes with the language:\nzh %s\nen %s", zh, en)
	}
	if _, errs, code := langOom(t, "C", "--lang", "fr", "oom"); code == 0 || !strings.Contains(errs, "want zh or en") {
		t.Errorf("--lang fr: code %d, stderr %q", code, errs)
	}
}

// TestOomFrameZH: in Chinese the incident's frame (labels, title, where)
// is Chinese too and its label column is as wide as the widest label, so
// the values line up; nothing of the English frame is left.
func TestOomFrameZH(t *testing.T) {
	out, errs, code := langOom(t, "zh_CN.UTF-8", "oom")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	for _, want := range []string{"    时间     ", "    结论     ", "    建议     - ", "第 1 行", "：尝试分配 "} {
		if !strings.Contains(out, want) {
			t.Errorf("zh frame lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{" when ", " verdict ", " do ", " line 1", "tried to allocate"} {
		if strings.Contains(out, bad) {
			t.Errorf("zh frame still has %q:\n%s", bad, out)
		}
	}
}
