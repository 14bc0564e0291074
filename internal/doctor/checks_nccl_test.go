package doctor

import (
	"strings"
	"testing"
)

func TestNCCLVersion(t *testing.T) {
	for _, c := range []struct {
		probe string
		sev   Severity
		title string
	}{
		{`{"python": "3.10.12", "torch": "1.9.0+cu111", "torch_cuda": "11.1", "nccl": "2.9.6"}`, Warn, "NCCL 2.9.6 has a known memory leak"},
		{`{"python": "3.10.12", "torch": "1.9.1+cu111", "torch_cuda": "11.1", "nccl": "2.9.9"}`, OK, "torch uses NCCL 2.9.9"},
		{`{"python": "3.10.12", "torch": "2.0.0+cu118", "torch_cuda": "11.8", "nccl": "2.16.5"}`, Warn, "NCCL 2.16.5 has a known memory leak"},
		{`{"python": "3.10.12", "torch": "2.1.0+cu121", "torch_cuda": "12.1", "nccl": "2.18.1"}`, OK, "torch uses NCCL 2.18.1"},
		{`{"python": "3.12.3", "torch": "2.8.0+cu128", "torch_cuda": "12.8", "nccl": "2.27.3"}`, Warn, "NCCL 2.27.3 has a known memory leak"},
		{`{"python": "3.12.3", "torch": "2.7.0+cu126", "torch_cuda": "12.6", "nccl": "2.26.2"}`, OK, "torch uses NCCL 2.26.2"},
		{`{"python": "3.12.3", "torch": "2.7.0+cu126", "torch_cuda": "12.6"}`, Info, "not reported"},
		{`{"python": "3.11.2", "torch": "1.13.0a0", "torch_cuda": ""}`, OK, "CPU build: no NCCL"},
	} {
		h := tree(t, nil)
		h.Run = pythonSays(c.probe)
		fs := checkNCCL(h)
		if len(fs) != 1 || fs[0].ID != "pytorch.nccl" || fs[0].Severity != c.sev || !strings.Contains(fs[0].Title, c.title) {
			t.Errorf("%s: %+v, want %v %q", c.probe, fs, c.sev, c.title)
		}
	}
}

func TestNCCLLibsAndSettings(t *testing.T) {
	h := tree(t, map[string]string{
		"root/usr/lib/x86_64-linux-gnu/libnccl.so.2.18.3": "elf",
		"root/etc/nccl.conf":                              "# site settings\nNCCL_NVLS_ENABLE=1\nNCCL_BUFFSIZE=4194304\n",
	})
	h.Run = pythonSays(`{"python": "3.10.12", "torch": "2.1.0+cu121", "torch_cuda": "12.1", "nccl": "2.18.1", "nccl_lib": "/venv/lib/python3.10/site-packages/nvidia/nccl/lib/libnccl.so.2"}`)
	h.Getenv = envOf(map[string]string{"NCCL_BUFFSIZE": "16777216", "NCCL_RUNTIME_CONNECT": "1"})
	fs := checkNCCL(h)
	var ids, text []string
	for _, f := range fs {
		ids = append(ids, f.ID+" "+f.Severity.String()+" "+f.Title)
		for _, e := range f.Evidence {
			text = append(text, e.Source+": "+e.Value)
		}
	}
	want := []string{"pytorch.nccl ok torch uses NCCL 2.18.1", "pytorch.nccl.env info NCCL_BUFFSIZE=16777216 costs memory",
		"pytorch.nccl.env info NCCL_NVLS_ENABLE=1 costs memory"}
	if strings.Join(ids, "|") != strings.Join(want, "|") {
		t.Fatalf("findings:\n%s", strings.Join(ids, "\n"))
	}
	all := strings.Join(text, "\n")
	for _, w := range []string{"system libnccl: /usr/lib/x86_64-linux-gnu/libnccl.so.2.18.3", "pip wheel nvidia-nccl: /venv/", "environment: NCCL_BUFFSIZE=16777216", "/etc/nccl.conf: NCCL_NVLS_ENABLE=1"} {
		if !strings.Contains(all, w) {
			t.Errorf("evidence lacks %q:\n%s", w, all)
		}
	}
}

func TestCheckHook(t *testing.T) {
	for _, c := range []struct {
		probe string
		sev   Severity
		title string
	}{
		{`{"python": "3.6.8", "torch": "1.10.2+cu113", "torch_cuda": "11.3"}`, Info, "runs under python3 (Python 3.6.8, torch 1.10.2+cu113), degraded"},
		{`{"python": "2.7.5", "torch": "1.4.0", "torch_cuda": ""}`, Warn, "cannot load under Python 2.7.5"},
		{`{"python": "3.8.10", "torch": "1.8.1", "torch_cuda": ""}`, Warn, "torch 1.8.1 is older"},
		{`{"python": "3.11.2", "executable": "/usr/bin/python3", "sitecustomize": "/usr/lib/python3.11/sitecustomize.py", "torch": "1.13.0a0", "torch_cuda": ""}`, OK, "can run under /usr/bin/python3"},
	} {
		h := tree(t, nil)
		h.Run = pythonSays(c.probe)
		fs := checkHook(h)
		if len(fs) != 1 || fs[0].Severity != c.sev || !strings.Contains(fs[0].Title, c.title) {
			t.Errorf("%s: %+v, want %v %q", c.probe, fs, c.sev, c.title)
		}
	}
	h := tree(t, nil)
	h.Run = pythonSays(`{"python": "3.11.2"}`)
	if fs := checkHook(h); fs != nil {
		t.Errorf("no torch: %+v (pytorch.versions says so)", fs)
	}
}
