// Package gpu reads NVIDIA GPUs and the memory their processes hold, through
// a small Backend interface. "No GPU" is a normal state, not an error.
//
// Getting a backend:
//
//	b, notice := gpu.Open(gpu.Options{SysRoot: env.SysRoot, ProcRoot: env.ProcRoot})
//	defer b.Close()
//	if notice != "" { fmt.Fprintln(stderr, notice) } // one line, e.g. "no NVIDIA GPU: …"
//	devs, err := b.Devices()     // []Device: memory, bus id, NUMA node, CPU affinity, modes
//	procs, err := b.Processes()  // []Process: per-GPU used memory, host and local PID
//
// Open tries, in order: NVML (libnvidia-ml.so.1 dlopened at run time through
// purego, no cgo; every symbol looked up before it is bound, so an old
// driver that lacks one loses that figure, never crashes), then
// `nvidia-smi --query-gpu/--query-compute-apps --format=csv` (slower, whole
// MiB), then the no-op backend (NewNoop: no devices, no error). A cheap PCI
// probe (vendor 0x10de under SysRoot/bus/pci/devices) comes first, so a host
// without NVIDIA hardware never loads a library.
//
// Memory: Device.UsedBytes excludes driver-reserved memory when
// ReservedBytes is set (NVML memory info v2, nvidia-smi's memory.reserved);
// with only v1, ReservedBytes is nil and UsedBytes includes it.
// Process.UsedBytes is nil when the driver will not say
// (NVML_VALUE_NOT_AVAILABLE: MIG, some containers).
//
// PIDs: NVML reports host PIDs. Process.HostPID keeps that; Process.PID is
// the PID in our namespace, mapped through NSpid in ProcRoot/<pid>/status
// when ProcRoot is an ancestor namespace's /proc; when it cannot be mapped
// (our own container's /proc) PID is 0 and Unmapped is true.
//
// For tests of other packages, fakes built from recorded fixtures:
//
//	gpu.NewFakeFromNVMLJSON("testdata/nvml-during-train.json") // nvidia-ml-py capture, one file per GPU
//	gpu.NewFakeFromSMIXML("testdata/nvidia-smi-q.xml")          // recorded nvidia-smi -q -x
//	gpu.NewFakeFromJSON("testdata/gpus.json")                   // {"info":…,"devices":[…],"processes":[…]}
//	gpu.NewFake(info, devices, processes)
//
// A Fake's fields (InfoV, DevicesV, ProcessV, Err) may be changed between
// calls. ProbeNVIDIAPCI and ExecRunner are exported for the doctor.
package gpu

import "errors"

// ErrNotPresent means this host has no NVIDIA GPU or no usable driver library.
var ErrNotPresent = errors.New("no NVIDIA GPU or driver library on this host")

// Device is one GPU as the backend sees it. Sizes are bytes.
type Device struct {
	Index      int    `json:"index"`
	UUID       string `json:"uuid"`
	Name       string `json:"name"`
	PCIBusID   string `json:"pci_bus_id,omitempty"`
	TotalBytes int64  `json:"total_bytes"`
	UsedBytes  int64  `json:"used_bytes"`
	FreeBytes  int64  `json:"free_bytes"`
	// ReservedBytes is driver/firmware-reserved memory (NVML memory_info v2);
	// nil when the backend cannot tell it apart from used.
	ReservedBytes *int64 `json:"reserved_bytes,omitempty"`
	// CPUAffinity lists the CPUs closest to the GPU (NVML or sysfs local_cpulist).
	CPUAffinity []int `json:"cpu_affinity,omitempty"`
	// NUMANode is the PCI numa_node from sysfs; -1 when the platform does not say.
	NUMANode int `json:"numa_node"`
	// PersistenceMode, ECCEnabled: nil when the backend could not read them
	// (not supported on this board, or an old driver without the call).
	PersistenceMode *bool `json:"persistence_mode,omitempty"`
	ECCEnabled      *bool `json:"ecc_enabled,omitempty"`
	// ComputeMode in nvidia-smi's spelling: "Default", "Exclusive_Process",
	// "Exclusive_Thread", "Prohibited"; "" when unknown.
	ComputeMode string `json:"compute_mode,omitempty"`
}

// Process is one process holding memory on a GPU.
type Process struct {
	GPUIndex int    `json:"gpu_index"`
	GPUUUID  string `json:"gpu_uuid"`
	// PID as the backend reported it: NVML reports host PIDs even inside a
	// container. HostPID keeps that; PID is the PID in our namespace, 0 when
	// it could not be mapped (then Unmapped is true).
	PID      int  `json:"pid"`
	HostPID  int  `json:"host_pid"`
	Unmapped bool `json:"unmapped,omitempty"`
	// UsedBytes is nil when the driver does not report it (e.g. under MIG
	// or without permission; NVML returns NVML_VALUE_NOT_AVAILABLE).
	UsedBytes *int64 `json:"used_bytes,omitempty"`
	// Name is the executable name; only nvidia-smi and fixtures give it.
	Name string `json:"name,omitempty"`
}

// Info is what a backend knows about the whole system.
type Info struct {
	Backend           string `json:"backend"` // "nvml", "nvidia-smi", "fake", "none"
	DriverVersion     string `json:"driver_version,omitempty"`
	CUDADriverVersion string `json:"cuda_driver_version,omitempty"` // e.g. "13.0"
}

// Backend is the GPU source. Implementations must be safe for use from one
// goroutine at a time; callers serialise.
type Backend interface {
	// Info returns backend and driver versions.
	Info() Info
	// Devices returns every GPU with its memory figures.
	Devices() ([]Device, error)
	// Processes returns the compute processes on all GPUs.
	Processes() ([]Process, error)
	// Close releases the library (nvmlShutdown).
	Close() error
}
