package cli

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/i18n"
)

// TestCLIMessagesComplete: every sentence the commands print has its
// Chinese text.
func TestCLIMessagesComplete(t *testing.T) {
	if m := cliCatalog.Missing(); len(m) > 0 {
		t.Errorf("catalog incomplete:\n%s", strings.Join(m, "\n"))
	}
}

// TestJSONSameInEveryLanguage: --json never changes with --lang, for the
// commands whose text this package localizes.
func TestJSONSameInEveryLanguage(t *testing.T) {
	doctorFixture(t, "centos7")
	root := tuneTree(t)
	for _, args := range [][]string{
		{"doctor", "--no-python", "--json"},
		{"tune", "plan", "--root", root, "--json"},
		{"lint", "--json", "../lint/testdata/rules/tm002_pos.py"},
		{"lint", "--list-rules", "--json"},
	} {
		en, _, _ := runCLI(t, append([]string{"--lang", "en"}, args...)...)
		zh, _, _ := runCLI(t, append([]string{"--lang", "zh"}, args...)...)
		if en != zh || en == "" {
			t.Errorf("%v: --json differs between en and zh:\nen %.300s\nzh %.300s", args, en, zh)
		}
		if strings.ContainsFunc(zh, func(r rune) bool { return r >= 0x4e00 && r <= 0x9fff }) {
			t.Errorf("%v: Chinese in --json", args)
		}
	}
}

// TestTablesAlignInChinese: the tune plan and lint --rules tables in zh
// put each column at the same display column on every row.
func TestTablesAlignInChinese(t *testing.T) {
	root := tuneTree(t)
	out, _, code := runCLI(t, "--lang", "zh", "tune", "plan", "--root", root)
	if code != 0 || !strings.Contains(out, "设置") || !strings.Contains(out, "修改") {
		t.Fatalf("tune plan in zh: %d\n%s", code, out)
	}
	lines := strings.Split(out, "\n")
	var table []string
	for _, l := range lines[1:] {
		if l == "" {
			break
		}
		table = append(table, l)
	}
	// The TARGET column: where the header's 目标值 starts, every row's
	// third cell starts too.
	col := i18n.Width(table[0][:strings.Index(table[0], "目标值")])
	for _, row := range table[1:] {
		prefix := i18n.Cut(row, col) // the first two cells, padded
		if i18n.Width(prefix) != col || strings.HasSuffix(strings.TrimRight(prefix, " "), " ") && !strings.HasSuffix(prefix, "  ") {
			t.Errorf("row %q: third column not at %d", row, col)
		}
		rest := []rune(row)[len([]rune(prefix)):]
		if len(rest) > 0 && rest[0] == ' ' {
			t.Errorf("row %q: third cell starts after column %d", row, col)
		}
	}
}

// TestRunsShowInChinese: runs' table in zh fits 80 display columns with
// its Chinese headers aligned, and show's header labels line up.
func TestRunsShowInChinese(t *testing.T) {
	t.Setenv("COLUMNS", "")
	db, id := runsFixtureDB(t)
	out, _, code := runCLI(t, "--lang", "zh", "runs", "--db", db)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[0], "状态") || !strings.Contains(lines[0], "命令") {
		t.Fatalf("runs in zh: %d\n%s", code, out)
	}
	// The status column: "oom-killed" starts where 状态 does.
	h := i18n.Width(lines[0][:strings.Index(lines[0], "状态")])
	if c := i18n.Width(lines[1][:strings.Index(lines[1], "oom-killed")]); c != h {
		t.Errorf("status at column %d, header at %d:\n%s", c, h, out)
	}
	for _, l := range lines {
		if i18n.Width(l) > 80 {
			t.Errorf("%d columns: %q", i18n.Width(l), l)
		}
	}
	out, _, code = runCLI(t, "--lang", "zh", "show", "--db", db, id)
	for _, want := range []string{"运行 " + id, "命令 python3 train.py", "来源 slurm 4242.0 (alice)", "\n事件：\n", "torchmem：运行 " + id} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("show in zh lacks %q:\n%s", want, out)
		}
	}
}
