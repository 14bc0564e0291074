package lint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Which PyTorch a file will run with, so fixes name APIs that exist there.
// Sources, strongest first: --torch-version; a pin in a requirements*.txt,
// pyproject.toml, setup.py, setup.cfg or environment.yml in the file's
// directory or above (the lower bound: the code must work there); the torch
// the job's Python imports. Samples of the pins read:
//
//	torch==2.1.2+cu121          requirements.txt
//	"torch>=1.13,<2.2",         pyproject.toml / setup.py
//	  - pytorch=1.12.1          environment.yml (conda)

// TorchVersion is a PyTorch major.minor; the zero value is unknown.
type TorchVersion struct {
	Major, Minor int
	Source       string // "--torch-version", "requirements.txt", "python3 (importable)"
}

// Known reports a version was found.
func (v TorchVersion) Known() bool { return v.Major > 0 }

// AtLeast reports v >= major.minor; an unknown version is taken to be
// current, so fixes default to today's API.
func (v TorchVersion) AtLeast(major, minor int) bool {
	if !v.Known() {
		return true
	}
	return v.Major > major || v.Major == major && v.Minor >= minor
}

func (v TorchVersion) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

var versionRe = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// ParseTorchVersion reads "2.1", "2.1.2+cu121" or "1.13.0a0".
func ParseTorchVersion(s, source string) (TorchVersion, error) {
	m := versionRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return TorchVersion{}, fmt.Errorf("torch version %q: want MAJOR.MINOR such as 2.1", s)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < 1 {
		return TorchVersion{}, fmt.Errorf("torch version %q: want MAJOR.MINOR such as 2.1", s)
	}
	return TorchVersion{Major: major, Minor: minor, Source: source}, nil
}

// pinRe finds a lower bound on torch (conda's "pytorch" too): ==, >=, ~=,
// or conda's single =. "torchvision==" and "pytorch-lightning=" do not
// match: the operator must follow the name.
var pinRe = regexp.MustCompile(`(?m)(?:^|[\s"'\-,\[])(?:torch|pytorch)\s*(?:==|>=|~=|=)\s*v?(\d+\.\d+)`)

// parsePin returns the torch lower bound pinned in a dependency file's text.
func parsePin(text, source string) (TorchVersion, bool) {
	m := pinRe.FindStringSubmatch(text)
	if m == nil {
		return TorchVersion{}, false
	}
	v, err := ParseTorchVersion(m[1], source)
	return v, err == nil
}

// pinFiles are read in this order in each directory.
var pinFiles = []string{"requirements.txt", "requirements-train.txt", "requirements-dev.txt",
	"pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment.yaml"}

// versionFinder resolves the version for each linted file, caching per
// directory.
type versionFinder struct {
	flag, probed TorchVersion
	byDir        map[string]TorchVersion
}

func newVersionFinder(flag, probed TorchVersion) *versionFinder {
	return &versionFinder{flag: flag, probed: probed, byDir: map[string]TorchVersion{}}
}

func (vf *versionFinder) forFile(path string) TorchVersion {
	if vf.flag.Known() {
		return vf.flag
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return vf.probed
	}
	if v := vf.pinAbove(filepath.Dir(abs)); v.Known() {
		return v
	}
	return vf.probed
}

// pinAbove is the first torch pin in dir or a directory above it.
func (vf *versionFinder) pinAbove(dir string) TorchVersion {
	if v, ok := vf.byDir[dir]; ok {
		return v
	}
	var v TorchVersion
	for _, name := range pinFiles {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if p, ok := parsePin(string(data), name); ok {
			v = p
			break
		}
	}
	if parent := filepath.Dir(dir); !v.Known() && parent != dir {
		v = vf.pinAbove(parent)
	}
	vf.byDir[dir] = v
	return v
}

// probeTorchScript reads torch's installed version from its metadata
// without importing it (importing torch takes seconds).
const probeTorchScript = `import importlib.metadata as m
try:
    print(m.version("torch"))
except Exception:
    pass
`

// probeTorch asks python which torch it would import; unknown when there
// is none or python cannot say within 10 seconds.
func probeTorch(ctx context.Context, python string) TorchVersion {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-I", "-c", probeTorchScript).Output()
	if err != nil {
		return TorchVersion{}
	}
	v, err := ParseTorchVersion(string(out), python+" (importable)")
	if err != nil {
		return TorchVersion{}
	}
	return v
}
