package packaging_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/tune"
)

// parseTuned reads a tuned.conf: section -> key -> value.
func parseTuned(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]string{}
	sec := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			sec = strings.Trim(line, "[]")
			out[sec] = map[string]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || sec == "" {
				t.Fatalf("%s: bad line %q", path, line)
			}
			out[sec][strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// TestTunedProfilesAreTuneProfiles: the tuned profiles the packages ship
// (/usr/lib/tuned/torchmem-<profile>) set exactly the sysctls and THP
// modes of `torchmem tune`'s profile of that name, so activating one by
// hand gives what `torchmem tune apply` would persist.
func TestTunedProfilesAreTuneProfiles(t *testing.T) {
	for name, settings := range tune.Profiles {
		t.Run(name, func(t *testing.T) {
			conf := parseTuned(t, filepath.Join("tuned", "torchmem-"+name, "tuned.conf"))
			if conf["main"]["include"] != "throughput-performance" || conf["main"]["summary"] == "" {
				t.Errorf("[main] %v", conf["main"])
			}
			sysctls := map[string]bool{}
			for _, s := range settings {
				switch {
				case s.Kind == tune.Sysctl:
					sysctls[s.Key] = true
					if got := conf["sysctl"][s.Key]; got != s.Target {
						t.Errorf("%s = %q, tune's %s profile says %s", s.Key, got, name, s.Target)
					}
				case s.Key == "thp.enabled":
					if got := conf["vm"]["transparent_hugepages"]; got != s.Target {
						t.Errorf("transparent_hugepages = %q, want %s", got, s.Target)
					}
				case s.Key == "thp.defrag":
					// The kernel's choice of defrag modes differs (EL 7's 3.10
					// has no defer+madvise): a static file may use a fallback.
					got := conf["sysfs"]["/sys/kernel/mm/transparent_hugepage/defrag"]
					if got != s.Target && !slices.Contains(s.Else, got) {
						t.Errorf("defrag = %q, want %s or one of %v", got, s.Target, s.Else)
					}
				}
			}
			for k := range conf["sysctl"] {
				if !sysctls[k] {
					t.Errorf("sysctl %s is not in tune's %s profile", k, name)
				}
			}
		})
	}
	if dirs, _ := filepath.Glob("tuned/*"); len(dirs) != len(tune.Profiles) {
		t.Errorf("tuned profiles %v, tune has %d", dirs, len(tune.Profiles))
	}
}
