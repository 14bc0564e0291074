package gpu

import (
	"errors"
	"fmt"
	"slices"
)

var _ Backend = (*nvmlBackend)(nil)

// affinityWords is how many 64-bit words of CPU mask we ask NVML for:
// 1024 CPUs, more than any current host.
const affinityWords = 16

// nvmlBackend reads GPUs through NVML, dlopened at run time without cgo.
type nvmlBackend struct {
	lib     *nvmlLib
	sysRoot string
	pids    *pidMapper
	handles []uintptr
	// ids holds, per handle, what does not change while NVML holds it
	// (index, name, UUID, PCI bus id, CPU affinity, NUMA node), read once
	// at open: Devices and Processes run every tick.
	ids  []Device
	info Info
}

// openNVML loads libPath, initialises NVML and takes a handle per device.
func openNVML(libPath, sysRoot string, pids *pidMapper) (*nvmlBackend, error) {
	lib, err := loadNVML(libPath)
	if err != nil {
		return nil, err
	}
	if err := lib.check("nvmlInit", lib.initFn()); err != nil {
		return nil, err
	}
	b := &nvmlBackend{lib: lib, sysRoot: sysRoot, pids: pids}
	var n uint32
	if err := lib.check("nvmlDeviceGetCount", lib.getCount(&n)); err != nil {
		_ = lib.close()
		return nil, err
	}
	for i := uint32(0); i < n; i++ {
		var h uintptr
		if err := lib.check("nvmlDeviceGetHandleByIndex", lib.getHandle(i, &h)); err != nil {
			_ = lib.close()
			return nil, fmt.Errorf("GPU %d: %w", i, err)
		}
		b.handles = append(b.handles, h)
		b.ids = append(b.ids, b.identity(int(i), h))
	}
	b.info = b.readInfo()
	return b, nil
}

func (b *nvmlBackend) readInfo() Info {
	info := Info{Backend: "nvml"}
	if b.lib.driverVersion != nil {
		buf := make([]byte, 96)
		if b.lib.driverVersion(&buf[0], uint32(len(buf))) == nvmlSuccess {
			info.DriverVersion = cString(buf)
		}
	}
	if b.lib.cudaVersion != nil {
		var v int32
		if b.lib.cudaVersion(&v) == nvmlSuccess {
			info.CUDADriverVersion = cudaVersionString(v)
		}
	}
	return info
}

// Info returns the driver and CUDA driver versions read at open.
func (b *nvmlBackend) Info() Info { return b.info }

// Close shuts NVML down.
func (b *nvmlBackend) Close() error { return b.lib.close() }

// Devices reads every GPU. A device whose memory cannot be read is still
// listed (with zero sizes) and the error names it; the others are complete.
func (b *nvmlBackend) Devices() ([]Device, error) {
	devs := make([]Device, 0, len(b.handles))
	var errs []error
	for i, h := range b.handles {
		d, err := b.device(i, h)
		if err != nil {
			errs = append(errs, fmt.Errorf("GPU %d: %w", i, err))
		}
		devs = append(devs, d)
	}
	return devs, errors.Join(errs...)
}

// identity reads the facts of device i that do not change while it is open.
func (b *nvmlBackend) identity(i int, h uintptr) Device {
	l := b.lib
	d := Device{Index: i, NUMANode: -1, Name: l.str(l.getName, h, 96), UUID: l.str(l.getUUID, h, 96),
		PCIBusID: b.busID(h), CPUAffinity: b.affinity(h)}
	fillFromSysfs(b.sysRoot, &d)
	return d
}

func (b *nvmlBackend) device(i int, h uintptr) (Device, error) {
	l := b.lib
	d := b.ids[i]
	d.CPUAffinity = slices.Clone(d.CPUAffinity) // each Device its own slice
	m, err := b.memory(h)
	if err == nil {
		d.TotalBytes, d.FreeBytes, d.UsedBytes = int64(m.Total), int64(m.Free), int64(m.Used)
		if m.Reserved != nil {
			r := int64(*m.Reserved)
			d.ReservedBytes = &r
		}
	}
	d.PersistenceMode = l.enabled(l.getPersistence, h)
	if l.getECC != nil {
		var cur, pending int32
		if l.getECC(h, &cur, &pending) == nvmlSuccess {
			on := cur == 1
			d.ECCEnabled = &on
		}
	}
	if l.getComputeMode != nil {
		var m int32
		if l.getComputeMode(h, &m) == nvmlSuccess {
			d.ComputeMode = computeModeName(m)
		}
	}
	return d, err
}

// memory prefers nvmlDeviceGetMemoryInfo_v2, which splits the driver's
// reserved memory out of used; drivers before R510 only have v1.
func (b *nvmlBackend) memory(h uintptr) (memInfo, error) {
	l := b.lib
	if l.getMemV2 != nil {
		buf := make([]byte, memV2Size)
		ne.PutUint32(buf, memV2Version)
		if l.getMemV2(h, &buf[0]) == nvmlSuccess {
			return decodeMemoryV2(buf)
		}
	}
	if l.getMemV1 == nil {
		return memInfo{}, fmt.Errorf("nvmlDeviceGetMemoryInfo: %w", errNotBound)
	}
	buf := make([]byte, memV1Size)
	if err := l.check("nvmlDeviceGetMemoryInfo", l.getMemV1(h, &buf[0])); err != nil {
		return memInfo{}, err
	}
	return decodeMemoryV1(buf)
}

func (b *nvmlBackend) busID(h uintptr) string {
	if b.lib.getPci == nil {
		return ""
	}
	buf := make([]byte, pciBufSize)
	if b.lib.getPci(h, &buf[0]) != nvmlSuccess {
		return ""
	}
	return cString(buf[b.lib.pciBusIDOffset : b.lib.pciBusIDOffset+32])
}

func (b *nvmlBackend) affinity(h uintptr) []int {
	if b.lib.getAffinity == nil {
		return nil
	}
	words := make([]uint64, affinityWords)
	if b.lib.getAffinity(h, uint32(len(words)), &words[0]) != nvmlSuccess {
		return nil
	}
	return cpusFromWords(words)
}

// str calls a (device, char*, len) getter; "" when absent or failing.
func (l *nvmlLib) str(fn func(uintptr, *byte, uint32) int32, h uintptr, size int) string {
	if fn == nil {
		return ""
	}
	buf := make([]byte, size)
	if fn(h, &buf[0], uint32(size)) != nvmlSuccess {
		return ""
	}
	return cString(buf)
}

// enabled calls an nvmlEnableState_t getter; nil when absent or failing.
func (l *nvmlLib) enabled(fn func(uintptr, *int32) int32, h uintptr) *bool {
	if fn == nil {
		return nil
	}
	var v int32
	if fn(h, &v) != nvmlSuccess {
		return nil
	}
	on := v == 1
	return &on
}

// Processes lists compute processes on every GPU, PIDs mapped into our
// PID namespace where that is possible.
func (b *nvmlBackend) Processes() ([]Process, error) {
	if b.lib.getProcs == nil {
		return nil, fmt.Errorf("nvmlDeviceGetComputeRunningProcesses: %w", errNotBound)
	}
	var out []Process
	var errs []error
	for i, h := range b.handles {
		raw, err := b.deviceProcs(h)
		if err != nil {
			errs = append(errs, fmt.Errorf("GPU %d: %w", i, err))
			continue
		}
		for _, r := range raw {
			out = append(out, Process{GPUIndex: i, GPUUUID: b.ids[i].UUID, HostPID: int(r.PID), UsedBytes: usedPtr(r.Used)})
		}
	}
	b.pids.Map(out)
	return out, errors.Join(errs...)
}

// deviceProcs asks for the count, then for the entries, retrying while
// processes appear between the two calls (NVML_ERROR_INSUFFICIENT_SIZE).
func (b *nvmlBackend) deviceProcs(h uintptr) ([]rawProcess, error) {
	l := b.lib
	var n uint32
	rc := l.getProcs(h, &n, nil)
	if rc == nvmlSuccess {
		return nil, nil
	}
	for try := 0; try < 4 && rc == nvmlInsufficientSize; try++ {
		capacity := n + 8
		buf := make([]byte, int(capacity)*l.procStride)
		n = capacity
		rc = l.getProcs(h, &n, &buf[0])
		if rc == nvmlSuccess {
			return decodeProcesses(buf, int(n), l.procStride)
		}
	}
	return nil, l.check("nvmlDeviceGetComputeRunningProcesses", rc)
}
