package gpu

// The C layouts NVML fills in, decoded from raw bytes at fixed offsets so the
// decoding is pure and table-tested, and no Go struct has to match C padding
// by accident. From nvml.h (x86-64 and arm64, LP64):
//
//	typedef struct { unsigned long long total, free, used; } nvmlMemory_t;          // 24 bytes
//	typedef struct { unsigned int version;                                         //  0 (+4 pad)
//	                 unsigned long long total, reserved, free, used; } nvmlMemory_v2_t; // 40 bytes
//	typedef struct { unsigned int pid; unsigned long long usedGpuMemory; }
//	        nvmlProcessInfo_v1_t;                                                  // 16 bytes
//	typedef struct { unsigned int pid; unsigned long long usedGpuMemory;
//	                 unsigned int gpuInstanceId, computeInstanceId; }
//	        nvmlProcessInfo_v2_t, nvmlProcessInfo_t (the _v3 call's type);         // 24 bytes
//	typedef struct { char busIdLegacy[16]; unsigned int domain, bus, device,
//	                 pciDeviceId, pciSubSystemId; char busId[32]; } nvmlPciInfo_t; // 68 bytes

import (
	"encoding/binary"
	"fmt"
	"strings"
)

const (
	memV1Size = 24
	memV2Size = 40
	// memV2Version is NVML_STRUCT_VERSION(Memory, 2): sizeof | 2<<24.
	memV2Version = uint32(memV2Size) | 2<<24

	procV1Size = 16 // nvmlDeviceGetComputeRunningProcesses (v1)
	procV2Size = 24 // _v2 and _v3 (nvmlProcessInfo_t has the v2 layout)

	pciLegacyBusIDOffset = 0  // nvmlDeviceGetPciInfo (v1): char busId[16] first
	pciBusIDOffset       = 36 // _v2/_v3: after busIdLegacy[16] and five uints
	pciBufSize           = 128

	// nvmlValueNotAvailable is NVML_VALUE_NOT_AVAILABLE, (unsigned long long)-1:
	// usedGpuMemory under MIG, in some containers, or without permission.
	nvmlValueNotAvailable = ^uint64(0)
)

var ne = binary.NativeEndian

// memInfo is one device's memory as NVML reports it. Reserved is nil when
// only nvmlDeviceGetMemoryInfo (v1) was available: then Used includes it.
type memInfo struct {
	Total, Free, Used uint64
	Reserved          *uint64
}

// decodeMemoryV1 reads nvmlMemory_t.
func decodeMemoryV1(b []byte) (memInfo, error) {
	if len(b) < memV1Size {
		return memInfo{}, fmt.Errorf("nvmlMemory_t: %d bytes, want %d", len(b), memV1Size)
	}
	return memInfo{Total: ne.Uint64(b[0:]), Free: ne.Uint64(b[8:]), Used: ne.Uint64(b[16:])}, nil
}

// decodeMemoryV2 reads nvmlMemory_v2_t (note the field order: reserved
// comes before free and used).
func decodeMemoryV2(b []byte) (memInfo, error) {
	if len(b) < memV2Size {
		return memInfo{}, fmt.Errorf("nvmlMemory_v2_t: %d bytes, want %d", len(b), memV2Size)
	}
	r := ne.Uint64(b[16:])
	return memInfo{Total: ne.Uint64(b[8:]), Reserved: &r, Free: ne.Uint64(b[24:]), Used: ne.Uint64(b[32:])}, nil
}

// rawProcess is one nvmlProcessInfo entry.
type rawProcess struct {
	PID  uint32
	Used uint64 // nvmlValueNotAvailable when the driver will not say
}

// decodeProcesses reads n entries of stride bytes (procV1Size or procV2Size).
func decodeProcesses(b []byte, n, stride int) ([]rawProcess, error) {
	if stride != procV1Size && stride != procV2Size {
		return nil, fmt.Errorf("nvmlProcessInfo: bad stride %d", stride)
	}
	if n < 0 || n*stride > len(b) {
		return nil, fmt.Errorf("nvmlProcessInfo: %d entries of %d bytes do not fit in %d", n, stride, len(b))
	}
	out := make([]rawProcess, n)
	for i := range out {
		e := b[i*stride:]
		out[i] = rawProcess{PID: ne.Uint32(e[0:]), Used: ne.Uint64(e[8:])}
	}
	return out, nil
}

// usedPtr turns an usedGpuMemory value into a pointer, nil when unavailable.
func usedPtr(v uint64) *int64 {
	if v == nvmlValueNotAvailable {
		return nil
	}
	n := int64(v)
	return &n
}

// cString returns the NUL-terminated string at the start of b.
func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

// cpusFromWords expands nvmlDeviceGetCpuAffinity's bitmask (an array of
// C unsigned long, 64 bits each on LP64: bit i of word w is CPU w*64+i).
func cpusFromWords(words []uint64) []int {
	var cpus []int
	for w, word := range words {
		for i := 0; i < 64; i++ {
			if word&(1<<uint(i)) != 0 {
				cpus = append(cpus, w*64+i)
			}
		}
	}
	return cpus
}

// cudaVersionString formats nvmlSystemGetCudaDriverVersion's integer
// (1000*major + 10*minor, e.g. 13000 or 12040) as "13.0" / "12.4".
func cudaVersionString(v int32) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// sysfsBusID turns NVML's "00000000:00:06.0" (eight-digit domain, upper
// case) into the sysfs directory name "0000:00:06.0".
func sysfsBusID(nvmlID string) string {
	id := strings.ToLower(strings.TrimSpace(nvmlID))
	dom, rest, ok := strings.Cut(id, ":")
	if !ok {
		return id
	}
	if len(dom) > 4 {
		dom = dom[len(dom)-4:]
	}
	return dom + ":" + rest
}

// computeModeName spells nvmlComputeMode_t the way nvidia-smi does.
func computeModeName(m int32) string {
	switch m {
	case 0:
		return "Default"
	case 1:
		return "Exclusive_Thread"
	case 2:
		return "Prohibited"
	case 3:
		return "Exclusive_Process"
	}
	return fmt.Sprintf("Unknown(%d)", m)
}
