package supervisor

import (
	"errors"
	"syscall"
	"testing"
)

func TestLookCommandLikeBash(t *testing.T) {
	files := map[string]fileKind{
		"/a/x": kindFile, "/b/x": kindExecFile, // executable wins over an earlier non-executable
		"/a/nox": kindFile, "/b/nox": kindFile, // none executable: the first one (126 later)
		"/a/d":   kindDir, // directories are skipped
		"./here": kindExecFile,
	}
	probe := func(p string) fileKind { return files[p] }
	for _, c := range []struct {
		name, path, want string
		ok               bool
	}{
		{"x", "/a:/b", "/b/x", true},
		{"nox", "/a:/b", "/a/nox", true},
		{"d", "/a:/b", "", false},
		{"missing", "/a:/b", "", false},
		{"here", "/a::/b", "./here", true},
		{"./rel/x", "", "./rel/x", true},
		{"", "/a", "", false},
	} {
		got, ok := lookCommand(c.name, c.path, probe)
		if got != c.want || ok != c.ok {
			t.Errorf("lookCommand(%q, %q) = %q %v, want %q %v", c.name, c.path, got, ok, c.want, c.ok)
		}
	}
}

func TestExecFailedLikeBash(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		kind   fileKind
		sample string
		code   int
		script bool
	}{
		{"not found", syscall.ENOENT, kindMissing, "", 127, false},
		{"bad interpreter", syscall.ENOENT, kindExecFile, "#!/nonexistent/python\n", 127, false},
		{"not executable", syscall.EACCES, kindFile, "exit 5\n", 126, false},
		{"directory", syscall.EACCES, kindDir, "", 126, false},
		{"component not a directory", syscall.ENOTDIR, kindMissing, "", 126, false},
		{"search permission", syscall.EACCES, kindMissing, "", 126, false},
		{"empty file", syscall.ENOEXEC, kindExecFile, "", 0, false},
		{"ELF of another arch", syscall.ENOEXEC, kindExecFile, "\x7fELF\x01\x01", 126, false},
		{"NUL in the first line", syscall.ENOEXEC, kindExecFile, "ab\x00cd\n", 126, false},
		{"NUL after the first line", syscall.ENOEXEC, kindExecFile, "exit 5\n\x00", 0, true},
		{"text without #!", syscall.ENOEXEC, kindExecFile, "exit 5\n", 0, true},
		{"not an errno", errors.New("odd"), kindExecFile, "", 126, false},
	} {
		got := execFailed(c.err, c.kind, []byte(c.sample))
		if got.Code != c.code || got.Script != c.script {
			t.Errorf("%s: %+v, want code %d script %v", c.name, got, c.code, c.script)
		}
	}
}
