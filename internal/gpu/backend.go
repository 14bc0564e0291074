// Package gpu reads NVIDIA GPUs and the memory their processes hold, through
// a small Backend interface: NVML loaded at run time without cgo, the
// nvidia-smi CSV fallback, a fake fed from fixtures, and a no-op backend for
// hosts without a GPU ("no GPU" is a normal state, not an error).
package gpu

import "errors"

// ErrNotPresent means this host has no NVIDIA GPU or no usable driver library.
var ErrNotPresent = errors.New("no NVIDIA GPU or driver library on this host")

// Device is one GPU as the backend sees it. Sizes are bytes.
type Device struct {
	Index         int    `json:"index"`
	UUID          string `json:"uuid"`
	Name          string `json:"name"`
	PCIBusID      string `json:"pci_bus_id,omitempty"`
	TotalBytes    int64  `json:"total_bytes"`
	UsedBytes     int64  `json:"used_bytes"`
	FreeBytes     int64  `json:"free_bytes"`
	// ReservedBytes is driver/firmware-reserved memory (NVML memory_info v2);
	// nil when the backend cannot tell it apart from used.
	ReservedBytes *int64 `json:"reserved_bytes,omitempty"`
	// CPUAffinity lists the CPUs closest to the GPU (NVML or sysfs local_cpulist).
	CPUAffinity []int `json:"cpu_affinity,omitempty"`
	// NUMANode is the PCI numa_node; -1 when the platform does not say.
	NUMANode int `json:"numa_node"`
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
	Name      string `json:"name,omitempty"`
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
