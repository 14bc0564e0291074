package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/i18n"
)

// TestHelpComplete: every visible command's Short and Long and every flag
// has its Chinese help (ids from the live command tree), and no Chinese
// text is left for a command or flag that is gone.
func TestHelpComplete(t *testing.T) {
	root := NewRoot(DefaultEnv())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	if m := helpCatalog(root).Missing(); len(m) > 0 {
		t.Errorf("help without Chinese text (add it to help_zh.go):\n%s", strings.Join(m, "\n"))
	}
}

// helpOut runs `torchmem ARGS` with the locale's LANG lang and returns
// stdout.
func helpOut(t *testing.T, lang string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	env := DefaultEnv()
	env.Lang = localeLang(func(k string) string {
		if k == "LANG" {
			return lang
		}
		return ""
	})
	env.Stdout, env.Stderr, env.Stdin = &out, &errb, strings.NewReader("")
	if code := Run(env, args); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

// TestHelpInChinese: `torchmem --lang zh --help` and LANG=zh_CN.UTF-8
// `torchmem doctor --help` print the help in Chinese, headings and flags
// included; English help is unchanged; the flag column holds its width.
func TestHelpInChinese(t *testing.T) {
	zh := helpOut(t, "C", "--lang", "zh", "--help")
	for _, want := range []string{"用法：", "可用命令：", "检查本机上会给 PyTorch 作业带来内存问题的设置", "说明文字的语言", "显示 torchmem 的帮助", "查看某个命令的详细说明"} {
		if !strings.Contains(zh, want) {
			t.Errorf("torchmem --lang zh --help lacks %q:\n%s", want, zh)
		}
	}
	doc := helpOut(t, "zh_CN.UTF-8", "doctor", "--help")
	for _, want := range []string{"doctor 读取内核设置", "选项 (Flags)：", "全局选项 (Global Flags)：", "跳过 Python 探测", "--no-python"} {
		if !strings.Contains(doc, want) {
			t.Errorf("LANG=zh_CN.UTF-8 doctor --help lacks %q:\n%s", want, doc)
		}
	}
	en := helpOut(t, "C", "doctor", "--help")
	if !strings.Contains(en, "Usage:") || !strings.Contains(en, "skip the Python probe") || strings.ContainsFunc(en, func(r rune) bool { return r >= 0x4e00 && r <= 0x9fff }) {
		t.Errorf("English help changed:\n%s", en)
	}
	// pflag pads the flag names (ASCII) and cobra the command names: the
	// descriptions of the commands start in one column.
	col := -1
	for _, l := range strings.Split(zh, "\n") {
		if !strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "   ") || strings.HasPrefix(l, "  torchmem") {
			continue
		}
		if i := strings.Index(l[2:], " "); i > 0 {
			rest := strings.TrimLeft(l[2+i:], " ")
			c := i18n.Width(l) - i18n.Width(rest)
			if strings.HasPrefix(l, "  -") {
				break // the flags: another block
			}
			if col >= 0 && c != col {
				t.Errorf("command description at column %d, not %d: %q", c, col, l)
			}
			col = c
		}
	}
}
