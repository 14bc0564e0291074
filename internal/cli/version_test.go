package cli

import (
	"runtime/debug"
	"testing"
)

// TestVersionString: --version of a `go build` or `go install` binary says
// which code it is, not "dev".
func TestVersionString(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	cases := []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"go install module@version", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.1"}}, "v0.4.1"},
		{"go build in a checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-12-01T17:00:00Z", "vcs.modified", "true")},
			"dev-0123456789ab-dirty (2026-12-01T17:00:00Z)"},
		{"no vcs stamp (-buildvcs=false)", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	}
	for _, c := range cases {
		if got := versionString(c.info, true); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	old := Version
	defer func() { Version = old }()
	Version = "v1.2.3"
	if got := versionString(cases[1].info, true); got != "v1.2.3" {
		t.Errorf("a linked version wins: %q", got)
	}
}
