package procfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const limitsHeader = "Limit                     Soft Limit           Hard Limit           Units     \n"

func TestParseLimits(t *testing.T) {
	cases := []struct {
		name, in string
		want     Limits
		bad      bool
	}{
		{"header and rows", limitsHeader +
			"Max processes             4096                 63704                processes \n" +
			"Max nice priority         0                    0                    \n",
			Limits{"Max processes": {4096, 63704, "processes"}, "Max nice priority": {0, 0, ""}}, false},
		{"one row without header", "Max processes             unlimited            unlimited            processes\n",
			Limits{"Max processes": {Unlimited, Unlimited, "processes"}}, false},
		{"header only", limitsHeader, Limits{}, false},
		{"bad number", "Max processes  lots  lots processes\n", nil, true},
		{"bad number after header", limitsHeader + "Max processes x y processes\n", nil, true},
		{"short row", "Max 1\n", nil, true},
	}
	for _, c := range cases {
		got, err := parseLimits(strings.NewReader(c.in))
		if c.bad {
			if err == nil {
				t.Errorf("%s: accepted: %+v", c.name, got)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%s: got %+v, %v", c.name, got, err)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s = %+v, want %+v", c.name, k, got[k], v)
			}
		}
	}
}

// The CentOS 7 capture (testdata/proc/517/limits) through the reader.
func TestLimitsFixture(t *testing.T) {
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	l, err := fs.Limits(517)
	if err != nil || l["Max processes"].Soft != 4096 || l["Max open files"].Hard != 4096 ||
		l["Max cpu time"].Soft != Unlimited || l["Max nice priority"].Units != "" || len(l) != 16 {
		t.Fatalf("Limits(517): %+v %v", l, err)
	}
	if FormatLimit(l["Max cpu time"].Soft) != "unlimited" || FormatLimit(l["Max processes"].Soft) != "4096" {
		t.Errorf("FormatLimit: %q %q", FormatLimit(l["Max cpu time"].Soft), FormatLimit(l["Max processes"].Soft))
	}
}

func TestSelfLimits(t *testing.T) {
	root := t.TempDir()
	fsys, _ := NewFS(root)
	if _, err := fsys.SelfLimits(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: err = %v", err)
	}
	os.MkdirAll(filepath.Join(root, "self"), 0o755)
	os.WriteFile(filepath.Join(root, "self", "limits"), []byte(limitsHeader+"Max open files 1 x files\n"), 0o644)
	if _, err := fsys.SelfLimits(); err == nil || !strings.Contains(err.Error(), "self/limits") {
		t.Fatalf("bad file: err = %v, want the path", err)
	}
}
