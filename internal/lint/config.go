package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// Config is the [tool.torchmem] table of a pyproject.toml:
//
//	[tool.torchmem]
//	disable = ["TM009"]                 # or short names: "deprecated-amp-api"
//	enable = ["TM001", "TM002"]         # only these (optional)
//	severity = { TM005 = "error" }      # error | warning | info
type Config struct {
	Enable   []string          `toml:"enable"`
	Disable  []string          `toml:"disable"`
	Severity map[string]string `toml:"severity"`
	Path     string            `toml:"-"` // the pyproject.toml it came from
}

type pyproject struct {
	Tool struct {
		Torchmem *Config `toml:"torchmem"`
	} `toml:"tool"`
}

// resolveRule maps an id or short name to the rule id.
func resolveRule(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if r, ok := ruleByID[strings.ToUpper(s)]; ok {
		return r.ID, true
	}
	for _, r := range allRules {
		if r.Name == s {
			return r.ID, true
		}
	}
	return "", false
}

// loadConfig reads the [tool.torchmem] table of path; nil when the file has
// none. Unknown rules and severities are errors naming the file.
func loadConfig(path string) (*Config, error) {
	var pp pyproject
	if _, err := toml.DecodeFile(path, &pp); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	c := pp.Tool.Torchmem
	if c == nil {
		return nil, nil
	}
	c.Path = path
	for _, list := range [][]string{c.Enable, c.Disable} {
		for _, id := range list {
			if _, ok := resolveRule(id); !ok {
				return nil, fmt.Errorf("%s: [tool.torchmem]: unknown rule %q", path, id)
			}
		}
	}
	for id, sev := range c.Severity {
		if _, ok := resolveRule(id); !ok {
			return nil, fmt.Errorf("%s: [tool.torchmem] severity: unknown rule %q", path, id)
		}
		switch sev {
		case SevError, SevWarning, SevInfo:
		default:
			return nil, fmt.Errorf("%s: [tool.torchmem] severity of %s: %q is not error, warning or info", path, id, sev)
		}
	}
	return c, nil
}

// configFinder finds, for a linted file, the closest pyproject.toml above it
// that has a [tool.torchmem] table, caching per directory.
type configFinder struct {
	byDir map[string]*Config
}

func (cf *configFinder) forFile(file string) (*Config, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", file, err)
	}
	return cf.forDir(filepath.Dir(abs))
}

func (cf *configFinder) forDir(dir string) (*Config, error) {
	if c, ok := cf.byDir[dir]; ok {
		return c, nil
	}
	var c *Config
	path := filepath.Join(dir, "pyproject.toml")
	if _, err := os.Stat(path); err == nil {
		if c, err = loadConfig(path); err != nil {
			return nil, err
		}
	}
	if c == nil {
		if parent := filepath.Dir(dir); parent != dir {
			var err error
			if c, err = cf.forDir(parent); err != nil {
				return nil, err
			}
		}
	}
	cf.byDir[dir] = c
	return c, nil
}

// allows reports whether the config keeps rule id, and its severity.
func (c *Config) allows(id, sev string) (bool, string) {
	if c == nil {
		return true, sev
	}
	if len(c.Enable) > 0 && !containsRule(c.Enable, id) && id != "TM000" {
		return false, sev
	}
	if containsRule(c.Disable, id) {
		return false, sev
	}
	for k, v := range c.Severity {
		if r, _ := resolveRule(k); r == id {
			sev = v
		}
	}
	return true, sev
}

func containsRule(list []string, id string) bool {
	for _, s := range list {
		if r, _ := resolveRule(s); r == id {
			return true
		}
	}
	return false
}
