package gpu

// A capture of one GPU through nvidia-ml-py, as recorded on the H200 host:
//
//	{"memory_info_v1": {"total": 150754820096, "free": 145793089536, "used": 4961730560},
//	 "memory_info_v2": {"total": 150754820096, "free": 145793089536, "used": 4316790784, "reserved": 644939776},
//	 "compute_procs": [{"pid": 517, "usedGpuMemory": 4307550208}],
//	 "driver": "580.159.04", "cuda_driver_version": 13000, "name": "NVIDIA H200",
//	 "uuid": "GPU-bd4603f9-…", "cpu_affinity_words": [65535, 0, 0, 0]}

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

type nvmlCapture struct {
	MemV1 *struct {
		Total, Free, Used uint64
	} `json:"memory_info_v1"`
	MemV2 *struct {
		Total, Free, Used, Reserved uint64
	} `json:"memory_info_v2"`
	Procs []struct {
		PID  int     `json:"pid"`
		Used *uint64 `json:"usedGpuMemory"` // null: NVML_VALUE_NOT_AVAILABLE
	} `json:"compute_procs"`
	Driver        string   `json:"driver"`
	CUDA          int32    `json:"cuda_driver_version"`
	Name          string   `json:"name"`
	UUID          string   `json:"uuid"`
	PCIBusID      string   `json:"pci_bus_id"`
	AffinityWords []uint64 `json:"cpu_affinity_words"`
}

// NewFakeFromNVMLJSON reads one or more single-GPU NVML captures (one file
// per GPU, in index order) into a Fake, the way the NVML backend would
// have decoded the same calls: memory v2 preferred, usedGpuMemory null
// kept as unknown.
func NewFakeFromNVMLJSON(paths ...string) (*Fake, error) {
	f := &Fake{InfoV: Info{Backend: "fake"}}
	for i, p := range paths {
		fh, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", p, err)
		}
		info, d, procs, err := parseNVMLCapture(fh, i)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		f.InfoV.DriverVersion, f.InfoV.CUDADriverVersion = info.DriverVersion, info.CUDADriverVersion
		f.DevicesV = append(f.DevicesV, d)
		f.ProcessV = append(f.ProcessV, procs...)
	}
	return f, nil
}

func parseNVMLCapture(r io.Reader, index int) (Info, Device, []Process, error) {
	var c nvmlCapture
	if err := json.NewDecoder(io.LimitReader(r, maxXMLBytes)).Decode(&c); err != nil {
		return Info{}, Device{}, nil, fmt.Errorf("nvml capture: %w", err)
	}
	d := Device{Index: index, Name: c.Name, UUID: c.UUID, PCIBusID: c.PCIBusID, NUMANode: -1}
	switch {
	case c.MemV2 != nil:
		r := int64(c.MemV2.Reserved)
		d.TotalBytes, d.FreeBytes, d.UsedBytes, d.ReservedBytes = int64(c.MemV2.Total), int64(c.MemV2.Free), int64(c.MemV2.Used), &r
	case c.MemV1 != nil:
		d.TotalBytes, d.FreeBytes, d.UsedBytes = int64(c.MemV1.Total), int64(c.MemV1.Free), int64(c.MemV1.Used)
	default:
		return Info{}, Device{}, nil, fmt.Errorf("nvml capture: no memory_info_v1 or _v2")
	}
	d.CPUAffinity = cpusFromWords(c.AffinityWords)
	var procs []Process
	for _, p := range c.Procs {
		pr := Process{GPUIndex: index, GPUUUID: c.UUID, PID: p.PID, HostPID: p.PID}
		if p.Used != nil {
			pr.UsedBytes = usedPtr(*p.Used)
		}
		procs = append(procs, pr)
	}
	info := Info{Backend: "fake", DriverVersion: c.Driver, CUDADriverVersion: cudaVersionString(c.CUDA)}
	return info, d, procs, nil
}
