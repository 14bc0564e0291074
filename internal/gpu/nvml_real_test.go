package gpu

import (
	"bytes"
	"context"
	"testing"
)

// openRealNVML opens the host's NVML, or skips: most machines that run the
// tests have no NVIDIA GPU.
func openRealNVML(tb testing.TB) *nvmlBackend {
	tb.Helper()
	if found, known := ProbeNVIDIAPCI("/sys"); known && !found {
		tb.Skip("no NVIDIA PCI device on this host")
	}
	b, err := openNVML(DefaultLibrary, "/sys", newPIDMapper("/proc"))
	if err != nil {
		tb.Skipf("NVML not usable here: %v", err)
	}
	return b
}

// TestNVMLRealHost runs on GPU hosts only: NVML's figures must be
// consistent and agree with nvidia-smi's (which rounds to MiB).
func TestNVMLRealHost(t *testing.T) {
	b := openRealNVML(t)
	defer b.Close()
	devs, err := b.Devices()
	if err != nil || len(devs) == 0 {
		t.Fatalf("Devices: %v, %v", devs, err)
	}
	for _, d := range devs {
		sum := d.UsedBytes + d.FreeBytes
		if d.ReservedBytes != nil {
			sum += *d.ReservedBytes
		}
		if d.TotalBytes == 0 || sum > d.TotalBytes+mib || sum < d.TotalBytes-mib {
			t.Errorf("GPU %d: used %d + free %d + reserved %v != total %d", d.Index, d.UsedBytes, d.FreeBytes, d.ReservedBytes, d.TotalBytes)
		}
		if d.UUID == "" || d.Name == "" || d.PCIBusID == "" {
			t.Errorf("GPU %d: identity missing: %+v", d.Index, d)
		}
	}
	if _, err := b.Processes(); err != nil {
		t.Errorf("Processes: %v", err)
	}
	out, err := ExecRunner(context.Background(), "nvidia-smi", "--query-gpu="+joinFields(queryGPUFields), "--format=csv,noheader,nounits")
	if err != nil {
		t.Logf("nvidia-smi not comparable: %v", err)
		return
	}
	rows, err := parseSMICSV(bytes.NewReader(out), queryGPUFields)
	if err != nil {
		t.Fatal(err)
	}
	smi, _, err := smiDevices(rows)
	if err != nil || len(smi) != len(devs) {
		t.Fatalf("nvidia-smi: %d GPUs (%v), NVML %d", len(smi), err, len(devs))
	}
	for i := range devs {
		if smi[i].UUID != devs[i].UUID || abs(smi[i].TotalBytes-devs[i].TotalBytes) > mib {
			t.Errorf("GPU %d: nvidia-smi %s %d, NVML %s %d", i, smi[i].UUID, smi[i].TotalBytes, devs[i].UUID, devs[i].TotalBytes)
		}
	}
	t.Logf("NVML %s, driver %s, CUDA %s: %+v", b.Info().Backend, b.Info().DriverVersion, b.Info().CUDADriverVersion, devs[0])
}

// BenchmarkNVMLRealQueryPair: one Processes + one memory query per GPU, the
// pair the sampler runs every tick (~22 µs on an H200, through purego).
func BenchmarkNVMLRealQueryPair(b *testing.B) {
	nb := openRealNVML(b)
	defer nb.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nb.Processes(); err != nil {
			b.Fatal(err)
		}
		for _, h := range nb.handles {
			if _, err := nb.memory(h); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func joinFields(f []string) string {
	var buf bytes.Buffer
	for i, s := range f {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(s)
	}
	return buf.String()
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
