package lint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePin(t *testing.T) {
	cases := []struct {
		text, want string
	}{
		{"numpy>=1.24\ntorch==2.1.2+cu121\ntorchvision==0.16.2\n", "2.1"},
		{"torchvision==0.15.1\npytorch-lightning==2.0.1\n", ""},
		{"[project]\ndependencies = [\n  \"torch>=1.13,<2.2\",\n  \"transformers\",\n]\n", "1.13"},
		{"install_requires=['numpy', 'torch~=1.12.0'],\n", "1.12"},
		{"dependencies:\n  - python=3.10\n  - pytorch=1.12.1\n  - pip:\n    - timm\n", "1.12"},
		{"torch<2.0\n", ""},
		{"torch\n", ""},
	}
	for _, c := range cases {
		v, ok := parsePin(c.text, "f")
		got := ""
		if ok {
			got = v.String()
		}
		if got != c.want {
			t.Errorf("%q: got %q want %q", c.text, got, c.want)
		}
	}
	for _, s := range []string{"x", "0.4", ""} {
		if _, err := ParseTorchVersion(s, "t"); err == nil {
			t.Errorf("%q: want an error", s)
		}
	}
}

// The flag beats a pin, a pin beats the importable torch, and the closest
// pin above the file wins.
func TestVersionFinder(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "svc", "train")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("torch==1.13.1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "svc", "pyproject.toml"), []byte("[project]\ndependencies = [\"torch>=2.3\"]\n"), 0o644)
	probed := TorchVersion{Major: 2, Minor: 5, Source: "python3 (importable)"}
	vf := newVersionFinder(TorchVersion{}, probed)
	if v := vf.forFile(filepath.Join(sub, "a.py")); v.String() != "2.3" || v.Source != "pyproject.toml" {
		t.Errorf("closest pin: got %v %s", v, v.Source)
	}
	if v := vf.forFile(filepath.Join(dir, "b.py")); v.String() != "1.13" {
		t.Errorf("top pin: got %v", v)
	}
	if v := newVersionFinder(TorchVersion{}, probed).forFile("/nonexistent-dir/x.py"); v != probed {
		t.Errorf("no pin: got %v, want the importable one", v)
	}
	flag, _ := ParseTorchVersion("2.0", "--torch-version")
	if v := newVersionFinder(flag, probed).forFile(filepath.Join(sub, "a.py")); v.String() != "2.0" {
		t.Errorf("flag: got %v", v)
	}
}

// probeTorch reads what a Python prints; a fake interpreter stands in for
// one with torch installed.
func TestProbeTorch(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "python")
	os.WriteFile(fake, []byte("#!/bin/sh\necho 2.2.1+cu121\n"), 0o755)
	if v := probeTorch(context.Background(), fake); v.String() != "2.2" {
		t.Errorf("fake python: got %v", v)
	}
	if v := probeTorch(context.Background(), filepath.Join(t.TempDir(), "missing")); v.Known() {
		t.Errorf("missing python: got %v", v)
	}
	if v := probeTorch(context.Background(), testPython(t)); v.Known() {
		t.Logf("this machine's python imports torch %v", v)
	}
}

// versionedScript uses every API whose fix depends on the version.
const versionedScript = `import torch
from torch.cuda.amp import GradScaler, autocast

scaler = GradScaler()


def train(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        with autocast():
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        torch.cuda.empty_cache()


def evaluate(model, val_loader):
    model.eval()
    return [model(x).argmax(1) for x in val_loader]
`

func TestVersionedFixes(t *testing.T) {
	python := testPython(t)
	run := func(pin string) map[string][]Finding {
		dir := t.TempDir()
		if pin != "" {
			os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte(pin+"\n"), 0o644)
		}
		path := filepath.Join(dir, "train.py")
		os.WriteFile(path, []byte(versionedScript), 0o644)
		parsed, err := ParseFiles(context.Background(), python, []string{path})
		if err != nil {
			t.Fatal(err)
		}
		res, err := lintParsed(parsed, Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]Finding{}
		for _, f := range res.Findings {
			out[f.Rule] = append(out[f.Rule], f)
		}
		return out
	}
	now := run("")
	if len(now["TM009"]) != 2 || len(now["TM004"]) != 0 || !strings.Contains(now["TM005"][0].Fix, "expandable_segments") ||
		!strings.Contains(now["TM001"][0].Fix, "inference_mode") {
		t.Errorf("unknown version: %+v", now)
	}
	old := run("torch==1.13.1")
	if len(old["TM009"]) != 1 || !strings.Contains(old["TM009"][0].Fix, "keep `torch.cuda.amp.GradScaler()`") ||
		!strings.Contains(old["TM009"][0].Message, "warns from PyTorch 2.4") {
		t.Errorf("1.13 TM009: %+v", old["TM009"])
	}
	if len(old["TM004"]) != 1 || !strings.Contains(old["TM004"][0].Message, "set_to_none defaults to False") ||
		!strings.Contains(old["TM004"][0].Fix, "set_to_none=True") {
		t.Errorf("1.13 TM004: %+v", old["TM004"])
	}
	if !strings.Contains(old["TM005"][0].Fix, "max_split_size_mb") || !strings.Contains(old["TM005"][0].Fix, "requirements.txt") {
		t.Errorf("1.13 TM005: %+v", old["TM005"])
	}
	ancient := run("torch==1.8.1")
	if len(ancient["TM009"]) != 0 || strings.Contains(ancient["TM001"][0].Fix, "inference_mode`") {
		t.Errorf("1.8: %+v", ancient)
	}
	if v := run("torch==2.3.0"); len(v["TM009"]) != 2 || !strings.Contains(v["TM009"][0].Message, "warns from PyTorch 2.4") {
		t.Errorf("2.3: %+v", v["TM009"])
	}
}
