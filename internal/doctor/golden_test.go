package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/i18n"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// pythonSays returns a runner that answers the Python probe with js.
func pythonSays(js string) gpu.Runner {
	return func(_ context.Context, name string, args ...string) ([]byte, error) {
		if len(args) == 2 && args[0] == "-c" && strings.Contains(args[1], "import torch") {
			return []byte(js + "\n"), nil
		}
		if isHookProbe(args) { // the hook import probe: recorded per Python version
			return recordedHookProbe(js)
		}
		return nil, fmt.Errorf("unexpected command %s %v", name, args)
	}
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// fixtureHost points a Host at testdata/<tree>.
func fixtureHost(tree string) *Host {
	dir := filepath.Join("testdata", tree)
	return &Host{ProcRoot: filepath.Join(dir, "proc"), SysRoot: filepath.Join(dir, "sys"), Root: filepath.Join(dir, "root"),
		GPU: gpu.NewNoop(), GPUNotice: "no NVIDIA GPU: no PCI device of vendor 0x10de under /sys/bus/pci/devices",
		Python: "python3", Getenv: envOf(nil)}
}

func h200Host(t *testing.T) *Host {
	h := fixtureHost("h200")
	f, err := gpu.NewFakeFromNVMLJSON("testdata/h200/nvml.json")
	if err != nil {
		t.Fatal(err)
	}
	// What the NVML capture lacks, from the same host's nvidia-smi query
	// (bus id, persistence, ECC, compute mode) and sysfs (NUMA node).
	on := true
	d := &f.DevicesV[0]
	d.PCIBusID, d.PersistenceMode, d.ECCEnabled, d.ComputeMode, d.NUMANode = "00000000:00:06.0", &on, &on, "Default", -1
	h.GPU, h.GPUNotice = f, ""
	h.Run = pythonSays(`{"python": "3.12.3", "numpy": "2.5.2", "torch": "2.11.0+cu130", "torch_cuda": "13.0"}`)
	h.Getenv = envOf(map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
	return h
}

// goldenHosts are the fixture hosts with their Python probes' answers.
func goldenHosts() map[string]func(t *testing.T) *Host {
	return map[string]func(t *testing.T) *Host{
		"debian12": func(t *testing.T) *Host {
			h := fixtureHost("debian12")
			// The probe's output on that machine (2026-12-01).
			h.Run = pythonSays(`{"python": "3.11.2", "executable": "/usr/bin/python3", "sitecustomize": "/usr/lib/python3.11/sitecustomize.py", "numpy": "1.24.2", "torch": "1.13.0a0", "torch_cuda": ""}`)
			return h
		},
		"h200": h200Host,
		"centos7": func(t *testing.T) *Host {
			h := fixtureHost("centos7")
			h.UID = 1000
			h.Run = pythonSays(`{"python": "3.6.8", "numpy": "1.19.5", "torch": "1.10.2+cu113", "torch_cuda": "11.3"}`)
			h.Getenv = envOf(map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128,expandable_segments:True"})
			return h
		},
	}
}

func TestGoldenReports(t *testing.T) {
	for name, mk := range goldenHosts() {
		t.Run(name, func(t *testing.T) {
			rep := Run(mk(t), Checks())
			js, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := WriteText(&text, rep, true, i18n.EN); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name+".golden.json"), append(js, '\n'))
			golden(t, filepath.Join("testdata", name+".golden.txt"), text.Bytes())
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the report; diff with -update:\n%s", path, got)
	}
}
