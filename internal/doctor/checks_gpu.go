package doctor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/units"
)

func checkGPUSource(h *Host) []Finding {
	info := "none"
	if h.GPU != nil {
		info = h.GPU.Info().Backend
	}
	g := h.gpus()
	f := newFinding("gpu.nvml", "gpu", OK, "")
	switch info {
	case "none":
		f.Severity, f.Title = Info, "no NVIDIA GPU"
		if found, _ := gpu.ProbeNVIDIAPCI(h.SysRoot); found {
			// A device on the bus that no tool can read is a broken driver
			// set-up, not a CPU host.
			f.Severity, f.Title = Warn, "NVIDIA GPU on PCI, but neither NVML nor nvidia-smi works"
			f = f.why("Without the driver's NVML library or nvidia-smi, neither torchmem nor PyTorch (torch.cuda.is_available() is False) can use the GPU: jobs silently run on the CPU or fail at the first .cuda().").
				fix("Load the NVIDIA kernel module and install the matching user-space driver (libnvidia-ml.so.1, nvidia-smi); in a container, run it with --gpus / the NVIDIA container runtime.")
		}
		return []Finding{f.ev("gpu", orDefault(h.GPUNotice, "no GPU backend"))}
	case "nvidia-smi":
		f.Severity, f.Title = Warn, "NVML could not be loaded; using nvidia-smi"
		f = f.why("Without libnvidia-ml.so.1 torchmem (and nvitop, DCGM, PyTorch's own memory queries) fall back to slower tools; it usually means a driver/library version mismatch or a container without the NVIDIA runtime.").
			fix("Install the driver's NVML library (package libnvidia-ml / nvidia-driver-libs / libnvidia-compute) matching the kernel module, or run the container with --gpus / the NVIDIA container runtime.")
	default:
		f.Title = "NVML loaded"
	}
	i := h.GPU.Info()
	f.Title += fmt.Sprintf(": %s, driver %s, CUDA %s", plural(len(g.devs), "GPU", "GPUs"), orDefault(i.DriverVersion, "?"), orDefault(i.CUDADriverVersion, "?"))
	f = f.ev(info, fmt.Sprintf("driver %s, CUDA driver API %s", orDefault(i.DriverVersion, "unknown"), orDefault(i.CUDADriverVersion, "unknown")))
	if g.err != nil {
		f.Severity = Warn
		f = f.ev(info, g.err.Error())
	}
	return []Finding{f}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// checkGPUModes: persistence, ECC and compute mode, one finding per GPU
// and mode where something is off, one summary where all are fine.
func checkGPUModes(h *Host) []Finding {
	var out []Finding
	for _, d := range h.gpus().devs {
		src := "nvml"
		if h.GPU != nil {
			src = h.GPU.Info().Backend
		}
		name := fmt.Sprintf("GPU %d (%s)", d.Index, d.Name)
		if d.PersistenceMode != nil {
			f := newFinding("gpu.persistence_mode", "gpu", OK, name+": persistence mode on").ev(src, onOff(*d.PersistenceMode))
			if !*d.PersistenceMode {
				f.Severity, f.Title = Warn, name+": persistence mode off"
				f = f.why("Without persistence the driver tears the GPU state down whenever no process holds it: every job start pays seconds of re-initialisation, and ECC/clock settings can reset between jobs.").
					fix("systemctl enable --now nvidia-persistenced (or nvidia-smi -pm 1).")
			}
			out = append(out, f)
		}
		if d.ECCEnabled != nil {
			f := newFinding("gpu.ecc", "gpu", OK, name+": ECC on").ev(src, onOff(*d.ECCEnabled))
			if !*d.ECCEnabled {
				f.Severity, f.Title = Info, name+": ECC off"
				f = f.why("Off gives a little more usable memory on GDDR boards, at the price of silent bit flips in weights and optimizer state on long runs.")
			}
			out = append(out, f)
		}
		if d.ComputeMode != "" {
			out = append(out, computeModeFinding(name, src, d.ComputeMode))
		}
	}
	return out
}

func computeModeFinding(name, src, mode string) Finding {
	f := newFinding("gpu.compute_mode", "gpu", OK, name+": compute mode "+mode).ev(src, mode)
	switch mode {
	case "Default":
		return f
	case "Prohibited":
		f.Severity = Fail
		return f.why("No process can create a CUDA context on this GPU.").fix("nvidia-smi -c DEFAULT (as root).")
	}
	f.Severity = Warn
	return f.why("Exclusive mode allows one CUDA context per GPU: a second process (a DataLoader worker that touches CUDA, an evaluation script, torch.compile's subprocesses) fails with 'CUDA-capable device(s) is/are busy or unavailable'.").
		fix("nvidia-smi -c DEFAULT, unless a scheduler sets exclusivity on purpose.")
}

func onOff(b bool) string {
	if b {
		return "Enabled"
	}
	return "Disabled"
}

// checkGPUProcesses flags GPU memory held by processes that no longer
// exist (a leaked context, a zombie) or that belong to other users.
func checkGPUProcesses(h *Host) []Finding {
	g := h.gpus()
	if len(g.devs) == 0 {
		return nil
	}
	var out []Finding
	var total int64
	for _, p := range g.procs {
		used := int64(0)
		if p.UsedBytes != nil {
			used = *p.UsedBytes
		}
		total += used
		if p.Unmapped {
			continue // another PID namespace: cannot be checked from here
		}
		status, src, err := h.procFile(strconv.Itoa(p.PID) + "/status")
		if err != nil {
			out = append(out, newFinding("gpu.orphan_memory", "gpu", Warn,
				fmt.Sprintf("GPU %d: %s held by PID %d, which no longer exists", p.GPUIndex, units.Bytes(used), p.PID)).
				ev(src, "missing").
				why("Memory held by a dead process (a zombie whose parent has not reaped it, or a stuck driver context) is unusable until released: jobs fail with CUDA out of memory on a GPU that looks idle.").
				fix(fmt.Sprintf("Find the parent of the zombie (ps -eo pid,ppid,stat,cmd | grep -w Z) and end it; as a last resort nvidia-smi --gpu-reset -i %d with the GPU idle.", p.GPUIndex)))
			continue
		}
		if uid := statusField(status, "Uid"); uid != "" && h.UID >= 0 {
			if real := strings.Fields(uid)[0]; real != strconv.Itoa(h.UID) {
				out = append(out, newFinding("gpu.other_users", "gpu", Info,
					fmt.Sprintf("GPU %d: %s held by PID %d of uid %s", p.GPUIndex, units.Bytes(used), p.PID, real)).
					ev(src, "Uid: "+uid))
			}
		}
	}
	if len(out) == 0 {
		out = append(out, newFinding("gpu.processes", "gpu", OK,
			fmt.Sprintf("%s on the GPUs, %s held, all alive", plural(len(g.procs), "process", "processes"), units.Bytes(total))))
	}
	return out
}

// checkGPUNUMA places each GPU on its NUMA node.
func checkGPUNUMA(h *Host) []Finding {
	var out []Finding
	multi := len(h.numaNodes()) > 1
	for _, d := range h.gpus().devs {
		aff := compactCPUs(d.CPUAffinity)
		f := newFinding("numa.gpu", "numa", OK, fmt.Sprintf("GPU %d: NUMA node %d, CPUs %s", d.Index, d.NUMANode, aff)).
			ev("/sys/bus/pci/devices/"+strings.ToLower(d.PCIBusID)+"/numa_node", strconv.Itoa(d.NUMANode))
		if d.NUMANode < 0 {
			f.Title = fmt.Sprintf("GPU %d: NUMA node not reported, CPUs %s", d.Index, aff)
			if multi {
				f.Severity = Info
				f = f.why("The platform does not say which node the GPU hangs off (numa_node -1): NUMA binding cannot be automatic.").
					fix("Check nvidia-smi topo -m and bind ranks by hand.")
			}
		}
		out = append(out, f)
	}
	return out
}

// compactCPUs renders [0 1 2 3 8] as "0-3,8".
func compactCPUs(cpus []int) string {
	if len(cpus) == 0 {
		return "unknown"
	}
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
