package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// gpuSource exports the GPU backend's devices (NVML, nvidia-smi or fake).
// Every series has gpu (the index) and UUID, dcgm-exporter's two GPU
// labels, so `on(UUID)` joins the two exporters' series.
type gpuSource struct{}

var (
	gpuInfo = desc("gpu_info", "Always 1; labels name each GPU: uuid, model name, driver version and the backend that read it (nvml, nvidia-smi).",
		"gpu", "uuid", "name", "driver_version", "backend")
	gpuTotal    = desc("gpu_memory_total_bytes", "Total memory of the GPU, from the GPU backend.", "gpu", "UUID")
	gpuUsed     = desc("gpu_memory_used_bytes", "Used memory of the GPU (all processes; excludes driver-reserved memory where the backend tells it apart).", "gpu", "UUID")
	gpuFree     = desc("gpu_memory_free_bytes", "Free memory of the GPU, from the GPU backend.", "gpu", "UUID")
	gpuReserved = desc("gpu_memory_reserved_bytes", "Driver/firmware-reserved memory of the GPU (NVML memory info v2 or nvidia-smi); absent when the backend cannot tell it.", "gpu", "UUID")
	gpuProcs    = desc("gpu_processes", "Compute processes holding memory on the GPU.", "gpu", "UUID")
)

func (gpuSource) name() string { return "gpu" }

func (gpuSource) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{gpuInfo, gpuTotal, gpuUsed, gpuFree, gpuReserved, gpuProcs} {
		ch <- d
	}
}

func (gpuSource) collect(st *State, ch chan<- prometheus.Metric) error {
	if st.Sample == nil {
		return st.SampleErr
	}
	g := st.Sample.GPU
	if g.Error != "" {
		return errors.New(g.Error)
	}
	procs := map[int]int{}
	for _, p := range g.Processes {
		procs[p.GPUIndex]++
	}
	for _, d := range g.Devices {
		i := itoa(d.Index)
		gauge(ch, gpuInfo, 1, i, d.UUID, d.Name, g.Info.DriverVersion, g.Info.Backend)
		gauge(ch, gpuTotal, float64(d.TotalBytes), i, d.UUID)
		gauge(ch, gpuUsed, float64(d.UsedBytes), i, d.UUID)
		gauge(ch, gpuFree, float64(d.FreeBytes), i, d.UUID)
		if d.ReservedBytes != nil {
			gauge(ch, gpuReserved, float64(*d.ReservedBytes), i, d.UUID)
		}
		gauge(ch, gpuProcs, float64(procs[d.Index]), i, d.UUID)
	}
	return nil
}
