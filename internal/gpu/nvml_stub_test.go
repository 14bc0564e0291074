package gpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// buildStub compiles testdata/nvmlstub into a shared library, so the purego
// binding runs against real C calling conventions and C struct layouts.
func buildStub(t *testing.T, defines ...string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler: cannot build the stand-in libnvidia-ml")
	}
	out := filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	args := append(append([]string{}, defines...), "-shared", "-fPIC", "-o", out, "testdata/nvmlstub/nvml_stub.c")
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, b)
	}
	return out
}

func TestNVMLAgainstStub(t *testing.T) {
	lib := buildStub(t)
	sys := t.TempDir()
	writeFile(t, filepath.Join(sys, "bus/pci/devices/0000:00:06.0/numa_node"), "-1\n")
	writeFile(t, filepath.Join(sys, "bus/pci/devices/0000:00:07.0/numa_node"), "1\n")
	b, err := openNVML(lib, sys, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := b.Info(); got != (Info{Backend: "nvml", DriverVersion: "580.159.04", CUDADriverVersion: "13.0"}) {
		t.Errorf("Info = %+v", got)
	}
	devs, err := b.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 2 {
		t.Fatalf("%d devices", len(devs))
	}
	d := devs[0]
	if d.Name != "NVIDIA H200" || d.UUID != "GPU-bd4603f9-2ede-ea65-a968-b198a041ece1" || d.PCIBusID != "00000000:00:06.0" {
		t.Errorf("device 0 identity: %+v", d)
	}
	if d.TotalBytes != 150754820096 || d.FreeBytes != 145793089536 || d.UsedBytes != 4316790784 ||
		d.ReservedBytes == nil || *d.ReservedBytes != 644939776 {
		t.Errorf("device 0 memory: total %d free %d used %d reserved %v", d.TotalBytes, d.FreeBytes, d.UsedBytes, d.ReservedBytes)
	}
	if !reflect.DeepEqual(d.CPUAffinity, seq(0, 15)) || d.NUMANode != -1 {
		t.Errorf("device 0 affinity %v numa %d", d.CPUAffinity, d.NUMANode)
	}
	if d.PersistenceMode == nil || !*d.PersistenceMode || d.ECCEnabled == nil || !*d.ECCEnabled || d.ComputeMode != "Default" {
		t.Errorf("device 0 modes: %v %v %q", d.PersistenceMode, d.ECCEnabled, d.ComputeMode)
	}
	d1 := devs[1]
	if !reflect.DeepEqual(d1.CPUAffinity, []int{64, 65}) || d1.NUMANode != 1 || *d1.ECCEnabled || d1.ComputeMode != "Exclusive_Process" {
		t.Errorf("device 1: %+v", d1)
	}
	// nvmlErrorString returns a C string: purego copies it into Go.
	if err := b.lib.check("nvmlDeviceGetHandleByIndex", 2); err == nil || err.Error() != "nvmlDeviceGetHandleByIndex: Invalid Argument (NVML error 2)" {
		t.Errorf("check(2) = %v", err)
	}
	var h uintptr
	if rc := b.lib.getHandle(5, &h); rc != 2 {
		t.Errorf("handle of GPU 5: rc %d", rc)
	}
	procs, err := b.Processes()
	if err != nil {
		t.Fatal(err)
	}
	want := []Process{
		{GPUIndex: 0, GPUUUID: d.UUID, PID: 517, HostPID: 517, UsedBytes: ptr(4307550208)},
		{GPUIndex: 0, GPUUUID: d.UUID, PID: 4242, HostPID: 4242},
	}
	if !reflect.DeepEqual(procs, want) {
		t.Errorf("Processes =\n%+v\nwant\n%+v", procs, want)
	}
}

// An old driver lacks the versioned calls: the binding falls back to v1
// layouts and leaves unknown figures unset, without crashing.
func TestNVMLStubOldDriver(t *testing.T) {
	b, err := openNVML(buildStub(t, "-DOLD_DRIVER"), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.lib.procStride != procV1Size || b.lib.pciBusIDOffset != pciLegacyBusIDOffset {
		t.Errorf("stride %d, pci offset %d", b.lib.procStride, b.lib.pciBusIDOffset)
	}
	if info := b.Info(); info.CUDADriverVersion != "" || info.DriverVersion != "580.159.04" {
		t.Errorf("Info = %+v", info)
	}
	devs, err := b.Devices()
	if err != nil {
		t.Fatal(err)
	}
	d := devs[0]
	// v1: used includes the reserved memory, which is not split out.
	if d.ReservedBytes != nil || d.UsedBytes != 4961730560 || d.PCIBusID != "0000:00:06.0" {
		t.Errorf("old driver device: used %d reserved %v bus %q", d.UsedBytes, d.ReservedBytes, d.PCIBusID)
	}
	if d.PersistenceMode != nil || d.ECCEnabled != nil || d.ComputeMode != "" {
		t.Errorf("modes should be unknown: %+v", d)
	}
	procs, err := b.Processes()
	if err != nil || len(procs) != 2 || *procs[0].UsedBytes != 4307550208 || procs[1].UsedBytes != nil {
		t.Errorf("old driver processes: %+v, %v", procs, err)
	}
}

func TestNVMLMissingLibrary(t *testing.T) {
	if _, err := openNVML(filepath.Join(t.TempDir(), "libnvidia-ml.so.1"), "", nil); err == nil {
		t.Fatal("want an error for a missing library")
	}
}

func TestNVMLNotNVML(t *testing.T) {
	// A library without NVML's symbols (libc itself) must be refused, not called.
	if _, err := os.Stat("/lib/x86_64-linux-gnu/libc.so.6"); err != nil {
		t.Skip("no libc.so.6 at the Debian path")
	}
	if _, err := openNVML("libc.so.6", "", nil); err == nil {
		t.Fatal("want an error for a library without NVML symbols")
	}
}

func seq(a, b int) []int {
	var s []int
	for i := a; i <= b; i++ {
		s = append(s, i)
	}
	return s
}

func ptr(n int64) *int64 { return &n }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkNVMLStubProcesses measures the binding's own cost per
// Processes call (purego call overhead, buffers, decoding) against the C
// stand-in, whose functions do no work: a real driver adds its ioctls.
func BenchmarkNVMLStubProcesses(b *testing.B) {
	nb, err := openNVML(buildStubB(b), "", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer nb.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nb.Processes(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNVMLStubDevices: the same for Devices (ten calls per GPU).
func BenchmarkNVMLStubDevices(b *testing.B) {
	nb, err := openNVML(buildStubB(b), "", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer nb.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nb.Devices(); err != nil {
			b.Fatal(err)
		}
	}
}

func buildStubB(b *testing.B) string {
	cc, err := exec.LookPath("cc")
	if err != nil {
		b.Skip("no C compiler")
	}
	out := filepath.Join(b.TempDir(), "libnvidia-ml.so.1")
	if o, err := exec.Command(cc, "-shared", "-fPIC", "-o", out, "testdata/nvmlstub/nvml_stub.c").CombinedOutput(); err != nil {
		b.Fatalf("cc: %v\n%s", err, o)
	}
	return out
}
