package gpu

// PCI facts from sysfs, under an injected root:
//
//	/sys/bus/pci/devices/0000:00:06.0/vendor         0x10de
//	/sys/bus/pci/devices/0000:00:06.0/class          0x030200
//	/sys/bus/pci/devices/0000:00:06.0/numa_node      -1
//	/sys/bus/pci/devices/0000:00:06.0/local_cpulist  0-15

import (
	"github.com/torchmem/torchmem/internal/cpulist"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const nvidiaVendor = "0x10de"

// pciDevicesDir is where the PCI devices of sysRoot are listed.
func pciDevicesDir(sysRoot string) string {
	return filepath.Join(sysRoot, "bus", "pci", "devices")
}

// ProbeNVIDIAPCI reports whether sysRoot lists an NVIDIA display or 3D
// controller (vendor 0x10de, PCI class 0x03xxxx): a directory read and a
// few small files, cheap enough to do before loading any driver library.
// known is false when the PCI listing itself is unreadable (some
// containers), in which case the caller should just try NVML.
func ProbeNVIDIAPCI(sysRoot string) (found, known bool) {
	dir := pciDevicesDir(sysRoot)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, false
	}
	for _, e := range ents {
		vendor, _ := readTrim(filepath.Join(dir, e.Name(), "vendor"))
		if vendor != nvidiaVendor {
			continue
		}
		// NVIDIA's audio, USB and NVSwitch functions share the vendor id.
		if class, _ := readTrim(filepath.Join(dir, e.Name(), "class")); strings.HasPrefix(class, "0x03") {
			return true, true
		}
	}
	return false, true
}

// fillFromSysfs sets d's NUMA node from sysfs, and its CPU affinity from
// local_cpulist when NVML did not give one.
func fillFromSysfs(sysRoot string, d *Device) {
	if d.PCIBusID == "" || sysRoot == "" {
		return
	}
	dev := filepath.Join(pciDevicesDir(sysRoot), sysfsBusID(d.PCIBusID))
	if s, err := readTrim(filepath.Join(dev, "numa_node")); err == nil {
		if n, err := strconv.Atoi(s); err == nil {
			d.NUMANode = n
		}
	}
	if d.CPUAffinity != nil {
		return
	}
	if s, err := readTrim(filepath.Join(dev, "local_cpulist")); err == nil {
		if cpus, err := cpulist.Parse(s); err == nil {
			d.CPUAffinity = cpus
		}
	}
}

func readTrim(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
