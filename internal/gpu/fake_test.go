package gpu

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestFakeFromNVMLJSON(t *testing.T) {
	f, err := NewFakeFromNVMLJSON("testdata/nvml-during-train.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Info() != (Info{Backend: "fake", DriverVersion: "580.159.04", CUDADriverVersion: "13.0"}) {
		t.Errorf("info %+v", f.Info())
	}
	devs, _ := f.Devices()
	d := devs[0]
	// memory v2: used without the 615 MiB the driver reserves; v1's used
	// (4961730560) is exactly the two together.
	if d.UsedBytes != 4316790784 || *d.ReservedBytes != 644939776 || d.UsedBytes+*d.ReservedBytes != 4961730560 ||
		d.TotalBytes != 150754820096 || d.FreeBytes != 145793089536 {
		t.Errorf("memory %+v", d)
	}
	if !reflect.DeepEqual(d.CPUAffinity, seq(0, 15)) || d.Name != "NVIDIA H200" {
		t.Errorf("device %+v", d)
	}
	procs, _ := f.Processes()
	if len(procs) != 1 || procs[0].PID != 517 || *procs[0].UsedBytes != 4307550208 {
		t.Errorf("procs %+v", procs)
	}
	idle, err := NewFakeFromNVMLJSON("testdata/nvml-idle.json", "testdata/nvml-during-train.json")
	if err != nil {
		t.Fatal(err)
	}
	devs, _ = idle.Devices()
	procs, _ = idle.Processes()
	if len(devs) != 2 || devs[0].UsedBytes != 0 || devs[1].Index != 1 || len(procs) != 1 || procs[0].GPUIndex != 1 {
		t.Errorf("two captures: %+v %+v", devs, procs)
	}
}

func TestFakeBehaviour(t *testing.T) {
	f := NewFake(Info{}, []Device{{Index: 0}}, nil)
	devs, _ := f.Devices()
	devs[0].Index = 9 // a copy: the fake is unchanged
	if again, _ := f.Devices(); again[0].Index != 0 || f.Info().Backend != "fake" {
		t.Error("fake shares its slice or lacks a backend name")
	}
	f.Err = errors.New("GPU is lost")
	if _, err := f.Processes(); err == nil {
		t.Error("Err not returned")
	}
	_ = f.Close()
	if !f.Closed {
		t.Error("Close not recorded")
	}
}

func TestFakeFromJSONAndXML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpus.json")
	js := `{"info":{"driver_version":"550.1"},"devices":[{"index":0,"uuid":"GPU-x","total_bytes":100,"numa_node":1}],
	"processes":[{"gpu_index":0,"pid":5,"host_pid":5,"used_bytes":7}]}`
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := NewFakeFromJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	devs, _ := f.Devices()
	procs, _ := f.Processes()
	if f.Info().Backend != "fake" || devs[0].NUMANode != 1 || *procs[0].UsedBytes != 7 {
		t.Errorf("%+v %+v %+v", f.Info(), devs, procs)
	}
	x, err := NewFakeFromSMIXML("testdata/nvidia-smi-q-during-train.xml")
	if err != nil {
		t.Fatal(err)
	}
	if procs, _ := x.Processes(); len(procs) != 1 || procs[0].PID != 517 {
		t.Errorf("xml fake %+v", procs)
	}
	if _, err := NewFakeFromNVMLJSON(path); err == nil || !strings.Contains(err.Error(), "memory_info") {
		t.Errorf("capture without memory info: %v", err)
	}
}

func TestNoop(t *testing.T) {
	b := NewNoop()
	devs, err1 := b.Devices()
	procs, err2 := b.Processes()
	if devs != nil || procs != nil || err1 != nil || err2 != nil || b.Info().Backend != "none" || b.Close() != nil {
		t.Error("noop backend is not empty")
	}
}
