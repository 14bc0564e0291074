package gpu

import (
	"errors"
	"fmt"

	"github.com/ebitengine/purego"
)

// nvmlReturn_t values the backend acts on (nvml.h).
const (
	nvmlSuccess          = 0
	nvmlNotSupported     = 3
	nvmlNoPermission     = 4
	nvmlInsufficientSize = 7
	nvmlFunctionNotFound = 13
)

// nvmlLib is the typed binding of the NVML calls torchmem uses. Each field is
// bound only when dlsym finds its symbol; a nil field means this driver lacks
// the call, and the backend leaves the matching figure unset instead of
// crashing. Device handles are opaque pointers (nvmlDevice_t).
type nvmlLib struct {
	handle uintptr
	path   string

	initFn         func() int32                       // nvmlInit_v2 | nvmlInit
	shutdown       func() int32                       // nvmlShutdown
	errorString    func(int32) string                 // nvmlErrorString
	getCount       func(*uint32) int32                // nvmlDeviceGetCount_v2 | nvmlDeviceGetCount
	getHandle      func(uint32, *uintptr) int32       // nvmlDeviceGetHandleByIndex_v2 | nvmlDeviceGetHandleByIndex
	getName        func(uintptr, *byte, uint32) int32 // nvmlDeviceGetName
	getUUID        func(uintptr, *byte, uint32) int32 // nvmlDeviceGetUUID
	getPci         func(uintptr, *byte) int32         // nvmlDeviceGetPciInfo_v3 | _v2 | v1
	pciBusIDOffset int
	getMemV2       func(uintptr, *byte) int32 // nvmlDeviceGetMemoryInfo_v2
	getMemV1       func(uintptr, *byte) int32 // nvmlDeviceGetMemoryInfo
	getProcs       func(uintptr, *uint32, *byte) int32
	procStride     int
	getAffinity    func(uintptr, uint32, *uint64) int32 // nvmlDeviceGetCpuAffinity
	getPersistence func(uintptr, *int32) int32          // nvmlDeviceGetPersistenceMode
	getECC         func(uintptr, *int32, *int32) int32  // nvmlDeviceGetEccMode
	getComputeMode func(uintptr, *int32) int32          // nvmlDeviceGetComputeMode
	driverVersion  func(*byte, uint32) int32            // nvmlSystemGetDriverVersion
	cudaVersion    func(*int32) int32                   // nvmlSystemGetCudaDriverVersion_v2 | nvmlSystemGetCudaDriverVersion
}

// loadNVML dlopens path (normally the soname "libnvidia-ml.so.1") and binds
// every symbol it has. It fails only when the library cannot be loaded or
// lacks the four calls nothing works without.
func loadNVML(path string) (*nvmlLib, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		// dlerror's text already names the library.
		return nil, fmt.Errorf("dlopen: %w", err)
	}
	l := &nvmlLib{handle: h, path: path}
	var missing []string
	need := func(fptr any, names ...string) {
		if bind(h, fptr, names...) == "" {
			missing = append(missing, names[0])
		}
	}
	need(&l.initFn, "nvmlInit_v2", "nvmlInit")
	need(&l.shutdown, "nvmlShutdown")
	need(&l.getCount, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount")
	need(&l.getHandle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex")
	if len(missing) > 0 {
		_ = purego.Dlclose(h)
		return nil, fmt.Errorf("%s lacks %v: too old or not NVML", path, missing)
	}
	l.bindOptional()
	return l, nil
}

// bindOptional binds the calls a driver may lack, choosing the newest
// version present and remembering which struct layout it fills.
func (l *nvmlLib) bindOptional() {
	h := l.handle
	bind(h, &l.errorString, "nvmlErrorString")
	bind(h, &l.getName, "nvmlDeviceGetName")
	bind(h, &l.getUUID, "nvmlDeviceGetUUID")
	switch bind(h, &l.getPci, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo") {
	case "nvmlDeviceGetPciInfo":
		l.pciBusIDOffset = pciLegacyBusIDOffset
	default:
		l.pciBusIDOffset = pciBusIDOffset
	}
	bind(h, &l.getMemV2, "nvmlDeviceGetMemoryInfo_v2")
	bind(h, &l.getMemV1, "nvmlDeviceGetMemoryInfo")
	switch bind(h, &l.getProcs, "nvmlDeviceGetComputeRunningProcesses_v3",
		"nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses") {
	case "nvmlDeviceGetComputeRunningProcesses":
		l.procStride = procV1Size
	default:
		l.procStride = procV2Size
	}
	bind(h, &l.getAffinity, "nvmlDeviceGetCpuAffinity")
	bind(h, &l.getPersistence, "nvmlDeviceGetPersistenceMode")
	bind(h, &l.getECC, "nvmlDeviceGetEccMode")
	bind(h, &l.getComputeMode, "nvmlDeviceGetComputeMode")
	bind(h, &l.driverVersion, "nvmlSystemGetDriverVersion")
	bind(h, &l.cudaVersion, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion")
}

// bind looks each name up in turn and binds fptr to the first one found,
// returning its name, or "" (fptr left nil) when none exists. Looking up
// before binding is what keeps an old driver from crashing us.
func bind(handle uintptr, fptr any, names ...string) string {
	for _, n := range names {
		sym, err := purego.Dlsym(handle, n)
		if err == nil && sym != 0 {
			purego.RegisterFunc(fptr, sym)
			return n
		}
	}
	return ""
}

// nvmlError is a failed NVML call with its return code and NVML's text.
type nvmlError struct {
	Call string
	Code int32
	Text string
}

func (e *nvmlError) Error() string {
	return fmt.Sprintf("%s: %s (NVML error %d)", e.Call, e.Text, e.Code)
}

// errNotBound: the driver library lacks the call.
var errNotBound = errors.New("not in this driver's NVML")

// check turns a return code into an error naming the call.
func (l *nvmlLib) check(call string, rc int32) error {
	if rc == nvmlSuccess {
		return nil
	}
	text := "unknown error"
	if l.errorString != nil {
		text = l.errorString(rc)
	}
	return &nvmlError{Call: call, Code: rc, Text: text}
}

// close shuts NVML down. The library stays mapped: unloading a driver
// library that may have started threads of its own is not worth the risk.
func (l *nvmlLib) close() error {
	return l.check("nvmlShutdown", l.shutdown())
}
