package gpu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseQueryGPUFixture(t *testing.T) {
	rows, err := parseSMICSV(strings.NewReader(readFixture(t, "nvidia-smi-query-gpu.csv")), queryGPUFields)
	if err != nil {
		t.Fatal(err)
	}
	devs, driver, err := smiDevices(rows)
	if err != nil {
		t.Fatal(err)
	}
	on := true
	want := []Device{{Index: 0, Name: "NVIDIA H200", UUID: "GPU-bd4603f9-2ede-ea65-a968-b198a041ece1",
		PCIBusID: "00000000:00:06.0", TotalBytes: 143771 * mib, UsedBytes: 0, FreeBytes: 143156 * mib,
		ReservedBytes: ptr(616 * mib), NUMANode: -1, PersistenceMode: &on, ECCEnabled: &on, ComputeMode: "Default"}}
	if !reflect.DeepEqual(devs, want) || driver != "580.159.04" {
		t.Errorf("got %+v driver %q", devs, driver)
	}
}

func TestParseSMICSVTable(t *testing.T) {
	idx := map[string]int{"GPU-a": 0, "GPU-b": 1}
	tests := []struct {
		name, in string
		fields   []string
		want     []Process
		wantErr  bool
	}{
		{"recorded during train", readFixture(t, "nvidia-smi-compute-apps-during-train.csv"), queryAppsFields,
			[]Process{{PID: 517, HostPID: 517, UsedBytes: ptr(4108 * mib), Name: "python3"}}, false},
		{"recorded two processes", readFixture(t, "nvidia-smi-compute-apps-two-processes.csv"), queryAppsFields,
			[]Process{{PID: 415, HostPID: 415, UsedBytes: ptr(810 * mib), Name: "python3"},
				{PID: 443, HostPID: 443, UsedBytes: ptr(102918 * mib), Name: "/home/user/.venv/bin/python3"}}, false},
		{"noheader nounits as queried", "GPU-b, 77, 1024, python3\nGPU-a, 78, [N/A], torchrun\n", queryAppsFields,
			[]Process{{GPUIndex: 1, GPUUUID: "GPU-b", PID: 77, HostPID: 77, UsedBytes: ptr(1024 * mib), Name: "python3"},
				{GPUIndex: 0, GPUUUID: "GPU-a", PID: 78, HostPID: 78, Name: "torchrun"}}, false},
		{"comma in process name", "GPU-a, 9, 10, python3 train.py --tags a,b\n", queryAppsFields,
			[]Process{{GPUUUID: "GPU-a", PID: 9, HostPID: 9, UsedBytes: ptr(10 * mib), Name: "python3 train.py --tags a,b"}}, false},
		{"comma and space in process name", "GPU-a, 9, 10, /opt/my app, v2/python3\n", queryAppsFields,
			[]Process{{GPUUUID: "GPU-a", PID: 9, HostPID: 9, UsedBytes: ptr(10 * mib), Name: "/opt/my app, v2/python3"}}, false},
		{"empty", "", queryAppsFields, nil, false},
		{"bad pid", "GPU-a, x, 10, p\n", queryAppsFields, nil, true},
		{"bad memory", "GPU-a, 9, lots, p\n", queryAppsFields, nil, true},
		{"too few cells", "GPU-a, 9\n", queryAppsFields, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := parseSMICSV(strings.NewReader(tt.in), tt.fields)
			var got []Process
			if err == nil {
				got, err = smiProcesses(rows, idx)
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseSMIXMLFixtures(t *testing.T) {
	info, devs, procs, err := parseSMIXML(strings.NewReader(readFixture(t, "nvidia-smi-q-during-train.xml")))
	if err != nil {
		t.Fatal(err)
	}
	if info.DriverVersion != "580.159.04" || info.CUDADriverVersion != "13.0" {
		t.Errorf("info %+v", info)
	}
	if len(devs) != 1 || devs[0].UsedBytes != 4117*mib || *devs[0].ReservedBytes != 616*mib || devs[0].TotalBytes != 143771*mib ||
		devs[0].PCIBusID != "00000000:00:06.0" || devs[0].ComputeMode != "Default" || !*devs[0].ECCEnabled || !*devs[0].PersistenceMode {
		t.Errorf("devices %+v", devs)
	}
	if len(procs) != 1 || procs[0].PID != 517 || *procs[0].UsedBytes != 4108*mib || procs[0].Name != "python3" {
		t.Errorf("processes %+v", procs)
	}
	_, devs, procs, err = parseSMIXML(strings.NewReader(readFixture(t, "nvidia-smi-q.xml")))
	if err != nil || len(devs) != 1 || len(procs) != 0 || devs[0].UsedBytes != 0 {
		t.Errorf("idle: %+v %+v %v", devs, procs, err)
	}
	if _, _, _, err := parseSMIXML(strings.NewReader("<nvidia_smi_log><gpu><fb_memory_usage><total>x MiB</total>")); err == nil {
		t.Error("bad XML accepted")
	}
}

// fakeSMI answers like nvidia-smi from the recorded files.
func fakeSMI(t *testing.T, oldDriver bool) Runner {
	gpuCSV := strings.SplitN(readFixture(t, "nvidia-smi-query-gpu.csv"), "\n", 2)[1]
	return func(_ context.Context, name string, args ...string) ([]byte, error) {
		a := strings.Join(args, " ")
		switch {
		case strings.Contains(a, "memory.reserved") && oldDriver:
			return nil, fmt.Errorf(`Field "memory.reserved" is not a valid field to query.`)
		case strings.HasPrefix(a, "--query-gpu="):
			if oldDriver { // no reserved column
				return []byte("0, NVIDIA H200, GPU-bd4603f9-2ede-ea65-a968-b198a041ece1, 00000000:00:06.0, 143771, 616, 143156, 580.159.04, Enabled, Enabled, Default\n"), nil
			}
			return []byte(gpuCSV), nil
		case strings.HasPrefix(a, "--query-compute-apps="):
			return []byte("GPU-bd4603f9-2ede-ea65-a968-b198a041ece1, 517, 4108, python3\n"), nil
		case a == "-q -x":
			return []byte(readFixture(t, "nvidia-smi-q-during-train.xml")), nil
		}
		return nil, fmt.Errorf("unexpected %s %s", name, a)
	}
}

func TestSMIBackend(t *testing.T) {
	for _, old := range []bool{false, true} {
		b, err := openSMI(fakeSMI(t, old), "nvidia-smi", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		devs, err := b.Devices()
		if err != nil || len(devs) != 1 {
			t.Fatalf("old=%v: %v %v", old, devs, err)
		}
		if (devs[0].ReservedBytes == nil) != old {
			t.Errorf("old=%v: reserved %v", old, devs[0].ReservedBytes)
		}
		procs, err := b.Processes()
		if err != nil || len(procs) != 1 || procs[0].PID != 517 || procs[0].GPUIndex != 0 {
			t.Errorf("old=%v: %+v %v", old, procs, err)
		}
		if info := b.Info(); info != (Info{Backend: "nvidia-smi", DriverVersion: "580.159.04", CUDADriverVersion: "13.0"}) {
			t.Errorf("Info = %+v", info)
		}
	}
}
