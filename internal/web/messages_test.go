package web

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/i18n"
)

// TestDashboardCatalogComplete: every message has both languages, and
// every id the pages and scripts use is in the catalog (an id missing
// would show as the id itself).
func TestDashboardCatalogComplete(t *testing.T) {
	if m := catalog.Missing(); len(m) > 0 {
		t.Fatal(strings.Join(m, "\n"))
	}
	used := map[string]bool{}
	scriptID := regexp.MustCompile(`\bT\("([a-z][a-z_.-]*)"|"#?(th\.[a-z_]+)"`)
	templateID := regexp.MustCompile(`\{\{t "([a-z][a-z_.]*)"`)
	files, _ := fs.Glob(static, "static/*")
	for _, f := range files {
		b, _ := fs.ReadFile(static, f)
		re, prefix := templateID, ""
		if strings.HasSuffix(f, ".js") {
			re, prefix = scriptID, "js."
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if id := strings.Join(m[1:], ""); id != "id" { // app.js's comment: T("id", a, b)
				used[prefix+id] = true
			}
		}
	}
	// The run page's statuses and the layout's title ("nav." + page).
	for _, id := range []string{"js.status.running", "js.status.oom-killed", "nav.node", "nav.runs", "nav.run", "nav.cluster"} {
		used[id] = true
	}
	if len(used) < 100 {
		t.Fatalf("found only %d ids: the patterns no longer match the pages", len(used))
	}
	for id := range used {
		if _, ok := messagesEN[id]; !ok {
			t.Errorf("%s is used but not in the catalog", id)
		}
	}
}

func TestScriptText(t *testing.T) {
	zh, en := string(scriptText(i18n.ZH)), string(scriptText(i18n.EN))
	if !strings.Contains(zh, `"cluster.ago":"{1}（{2} 前）"`) || !strings.Contains(en, `"run.title":"Run {1}: {2}"`) || strings.Contains(en, "nav.node") {
		t.Fatalf("script text:\n%s\n%s", zh, en)
	}
}

func TestAcceptLang(t *testing.T) {
	for h, want := range map[string]string{"zh-CN,zh;q=0.9,en;q=0.8": "zh", "en-US,en;q=0.9": "en", "fr, zh-TW;q=0.5": "zh", "fr": "", "": ""} {
		tag, ok := acceptLang(h)
		got := ""
		if ok {
			got = tag.String()
		}
		if got != want {
			t.Errorf("acceptLang(%q) = %q, want %q", h, got, want)
		}
	}
}
