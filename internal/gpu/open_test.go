package gpu

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sysTree writes a PCI device listing like the H200 host's (gpu-pci.txt:
// 0000:00:06.0 class=0x030200 numa_node=-1 local_cpulist=0-15) plus a
// non-GPU device.
func sysTree(t *testing.T, nvidia bool) string {
	root := t.TempDir()
	dev := filepath.Join(root, "bus/pci/devices")
	writeFile(t, filepath.Join(dev, "0000:00:01.0/vendor"), "0x8086\n")
	writeFile(t, filepath.Join(dev, "0000:00:01.0/class"), "0x060000\n")
	if nvidia {
		writeFile(t, filepath.Join(dev, "0000:00:06.0/vendor"), "0x10de\n")
		writeFile(t, filepath.Join(dev, "0000:00:06.0/class"), "0x030200\n")
		writeFile(t, filepath.Join(dev, "0000:00:06.0/numa_node"), "-1\n")
		writeFile(t, filepath.Join(dev, "0000:00:06.0/local_cpulist"), "0-15\n")
	}
	return root
}

func TestOpenNoNVIDIA(t *testing.T) {
	b, notice := Open(Options{SysRoot: sysTree(t, false), ProcRoot: t.TempDir()})
	if b.Info().Backend != "none" || !strings.HasPrefix(notice, "no NVIDIA GPU: no PCI device of vendor 0x10de") {
		t.Errorf("backend %q notice %q", b.Info().Backend, notice)
	}
}

func TestOpenFallsBackToSMI(t *testing.T) {
	sys := sysTree(t, true)
	b, notice := Open(Options{SysRoot: sys, ProcRoot: t.TempDir(), Library: filepath.Join(t.TempDir(), "missing.so"), Run: fakeSMI(t, false)})
	defer b.Close()
	if b.Info().Backend != "nvidia-smi" || !strings.HasPrefix(notice, "using nvidia-smi") || strings.Count(notice, "missing.so") != 1 {
		t.Fatalf("backend %q notice %q", b.Info().Backend, notice)
	}
	devs, err := b.Devices()
	if err != nil {
		t.Fatal(err)
	}
	// NVIDIA's bus id has an eight-digit domain; sysfs a four-digit one.
	if !reflect.DeepEqual(devs[0].CPUAffinity, seq(0, 15)) || devs[0].NUMANode != -1 {
		t.Errorf("sysfs not read: %+v", devs[0])
	}
}

func TestOpenNothingWorks(t *testing.T) {
	b, notice := Open(Options{SysRoot: sysTree(t, true), Library: filepath.Join(t.TempDir(), "missing.so"), SMI: "nvidia-smi-not-installed-here"})
	// A device is on the bus: "no NVIDIA GPU" would be wrong.
	if b.Info().Backend != "none" || !strings.HasPrefix(notice, "NVIDIA GPU on PCI but no driver access: dlopen") || !strings.Contains(notice, "not found on PATH") {
		t.Errorf("backend %q notice %q", b.Info().Backend, notice)
	}
}

func TestOpenNVMLStub(t *testing.T) {
	b, notice := Open(Options{SysRoot: sysTree(t, true), ProcRoot: t.TempDir(), Library: buildStub(t)})
	defer b.Close()
	if b.Info().Backend != "nvml" || notice != "" {
		t.Errorf("backend %q notice %q", b.Info().Backend, notice)
	}
}

// This machine: whatever it has, Open must not fail or panic, and a host
// without NVIDIA hardware must say so in one line.
func TestOpenRealHost(t *testing.T) {
	b, notice := Open(Options{})
	defer b.Close()
	if found, known := ProbeNVIDIAPCI("/sys"); known && !found && (b.Info().Backend != "none" || notice == "") {
		t.Errorf("no NVIDIA PCI device, yet backend %q notice %q", b.Info().Backend, notice)
	}
	if _, err := b.Devices(); err != nil {
		t.Errorf("Devices: %v", err)
	}
	t.Logf("backend %s; notice %q", b.Info().Backend, notice)
}

// A failing command's error is its name, status and first line of output:
// the arguments (a long --query list) would hide the driver's message.
func TestExecRunnerError(t *testing.T) {
	_, err := ExecRunner(context.Background(), "/bin/sh", "-c", "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.' >&2; exit 9")
	if err == nil || !strings.HasPrefix(err.Error(), "sh: exit status 9: NVIDIA-SMI has failed") {
		t.Errorf("err = %v", err)
	}
	_, err = ExecRunner(context.Background(), "/nonexistent/nvidia-smi")
	if err == nil || strings.HasSuffix(err.Error(), ":") || !strings.HasPrefix(err.Error(), "nvidia-smi: ") {
		t.Errorf("missing command: err = %v", err)
	}
}

// The smi backend reads a device's sysfs placement once, not every tick,
// and hands each Device its own affinity slice.
func TestSMIPlacementReadOnce(t *testing.T) {
	sys := sysTree(t, true)
	b, _ := Open(Options{SysRoot: sys, ProcRoot: t.TempDir(), Library: filepath.Join(t.TempDir(), "missing.so"), Run: fakeSMI(t, false)})
	defer b.Close()
	first, err := b.Devices()
	if err != nil {
		t.Fatal(err)
	}
	first[0].CPUAffinity[0] = 99
	writeFile(t, filepath.Join(sys, "bus/pci/devices/0000:00:06.0/local_cpulist"), "0-3\n")
	again, err := b.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again[0].CPUAffinity, seq(0, 15)) {
		t.Errorf("affinity %v: sysfs re-read or slice shared", again[0].CPUAffinity)
	}
}
