package cli

import (
	"bytes"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := DefaultEnv()
	env.Lang = langEN // the tests read English whatever the locale (lang_test.go: --lang)
	env.Stdout, env.Stderr, env.Stdin = &out, &errb, strings.NewReader("")
	code := Run(env, args)
	return out.String(), errb.String(), code
}

func TestVersionAndCompletion(t *testing.T) {
	out, _, code := runCLI(t, "--version")
	if code != 0 || !strings.Contains(out, "torchmem version") {
		t.Fatalf("--version: code %d, out %q", code, out)
	}
	out, _, code = runCLI(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "__start_torchmem") {
		t.Fatalf("completion bash: code %d, %d bytes", code, len(out))
	}
	_, errs, code := runCLI(t, "no-such-command")
	if code == 0 || !strings.Contains(errs, "unknown command") {
		t.Fatalf("unknown command: code %d, stderr %q", code, errs)
	}
}
