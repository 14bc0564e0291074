package gpu

import (
	"bytes"
	"strings"
	"testing"
)

func FuzzParseSMICSV(f *testing.F) {
	f.Add(readFixture(f, "nvidia-smi-query-gpu.csv"))
	f.Add(readFixture(f, "nvidia-smi-compute-apps-two-processes.csv"))
	f.Add("GPU-a, 9, 10, python3, x,y\n")
	f.Fuzz(func(t *testing.T, s string) {
		if rows, err := parseSMICSV(strings.NewReader(s), queryGPUFields); err == nil {
			_, _, _ = smiDevices(rows)
		}
		if rows, err := parseSMICSV(strings.NewReader(s), queryAppsFields); err == nil {
			_, _ = smiProcesses(rows, nil)
		}
	})
}

func FuzzParseSMIXML(f *testing.F) {
	f.Add(readFixture(f, "nvidia-smi-q-during-train.xml"))
	f.Fuzz(func(t *testing.T, s string) {
		_, _, _, _ = parseSMIXML(strings.NewReader(s))
	})
}

func FuzzParseNVMLCapture(f *testing.F) {
	f.Add(readFixture(f, "nvml-during-train.json"))
	f.Fuzz(func(t *testing.T, s string) {
		_, _, _, _ = parseNVMLCapture(bytes.NewReader([]byte(s)), 0)
	})
}

func FuzzParseNSpid(f *testing.F) {
	f.Add(readFixture(f, "proc-pid-status-during-train.txt"))
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range parseNSpid(s) {
			if p <= 0 {
				t.Fatalf("pid %d", p)
			}
		}
	})
}

func BenchmarkSMIParse(b *testing.B) {
	gpus := readFixture(b, "nvidia-smi-query-gpu.csv")
	apps := readFixture(b, "nvidia-smi-compute-apps-two-processes.csv")
	b.ReportAllocs()
	for b.Loop() {
		rows, _ := parseSMICSV(strings.NewReader(gpus), queryGPUFields)
		devs, _, _ := smiDevices(rows)
		rows, _ = parseSMICSV(strings.NewReader(apps), queryAppsFields)
		_, _ = smiProcesses(rows, map[string]int{devs[0].UUID: 0})
	}
}

func BenchmarkSMIXMLParse(b *testing.B) {
	x := readFixture(b, "nvidia-smi-q-during-train.xml")
	b.ReportAllocs()
	for b.Loop() {
		_, _, _, _ = parseSMIXML(strings.NewReader(x))
	}
}
