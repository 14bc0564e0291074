package oomexplain

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMessagesComplete: every message id the rules name has English text,
// and every English text is used (a translation keyed by the same ids is
// then complete when it has every key).
func TestMessagesComplete(t *testing.T) {
	used := map[string]bool{}
	re := regexp.MustCompile(`\b(msg|adviceMsg)\("([a-z0-9_.]+)"`)
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
