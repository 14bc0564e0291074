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
	head := word("gpu_source.nvml")
	switch info {
	case "none":
		f.Severity = Info
		f = f.titled("gpu_source.title_none")
		if found, _ := gpu.ProbeNVIDIAPCI(h.SysRoot); found {
			// A device on the bus that no tool can read is a broken driver
			// set-up, not a CPU host.
			f.Severity = Warn
			f = f.titled("gpu_source.title_broken").why("gpu_source.broken.why").fix("gpu_source.broken.fix")
		}
		return []Finding{f.ev("gpu", orDefault(h.GPUNotice, "no GPU backend"))}
	case "nvidia-smi":
		f.Severity, head = Warn, word("gpu_source.smi")
		f = f.why("gpu_source.smi.why").fix("gpu_source.smi.fix")
	}
	i := h.GPU.Info()
	f = f.titled("gpu_source.title", head, word(plural(len(g.devs), "gpu_source.gpus_one", "gpu_source.gpus"), len(g.devs)), orDefault(i.DriverVersion, "?"), orDefault(i.CUDADriverVersion, "?"))
	f = f.evMsg(info, "ev.driver", orUnknown(i.DriverVersion), orUnknown(i.CUDADriverVersion))
	if g.err != nil {
		f.Severity = Warn
		f = f.ev(info, g.err.Error())
	}
	return []Finding{f}
}

// orUnknown is s, or the word "unknown" (translated) when it is empty.
func orUnknown(s string) any {
	if s == "" {
		return word("ev.unknown")
	}
	return s
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
			f := newFinding("gpu.persistence_mode", "gpu", OK, "gpu_modes.persistence_on", name).ev(src, onOff(*d.PersistenceMode))
			if !*d.PersistenceMode {
				f.Severity = Warn
				f = f.titled("gpu_modes.persistence_off", name).why("gpu_modes.persistence.why").fix("gpu_modes.persistence.fix")
			}
			out = append(out, f)
		}
		if d.ECCEnabled != nil {
			f := newFinding("gpu.ecc", "gpu", OK, "gpu_modes.ecc_on", name).ev(src, onOff(*d.ECCEnabled))
			if !*d.ECCEnabled {
				f.Severity = Info
				f = f.titled("gpu_modes.ecc_off", name).why("gpu_modes.ecc.why")
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
	f := newFinding("gpu.compute_mode", "gpu", OK, "gpu_modes.compute", name, mode).ev(src, mode)
	switch mode {
	case "Default":
		return f
	case "Prohibited":
		f.Severity = Fail
		return f.why("gpu_modes.prohibited.why").fix("gpu_modes.prohibited.fix")
	}
	f.Severity = Warn
	return f.why("gpu_modes.exclusive.why").fix("gpu_modes.exclusive.fix")
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
			out = append(out, newFinding("gpu.orphan_memory", "gpu", Warn, "gpu_procs.orphan", p.GPUIndex, units.Bytes(used), p.PID).
				evMsg(src, "ev.missing").why("gpu_procs.orphan.why").fix("gpu_procs.orphan.fix", p.GPUIndex))
			continue
		}
		if uid := statusField(status, "Uid"); uid != "" && h.UID >= 0 {
			if real := strings.Fields(uid)[0]; real != strconv.Itoa(h.UID) {
				out = append(out, newFinding("gpu.other_users", "gpu", Info, "gpu_procs.other_user", p.GPUIndex, units.Bytes(used), p.PID, real).
					ev(src, "Uid: "+uid))
			}
		}
	}
	if len(out) == 0 {
		out = append(out, newFinding("gpu.processes", "gpu", OK, plural(len(g.procs), "gpu_procs.title_one", "gpu_procs.title"), len(g.procs), units.Bytes(total)))
	}
	return out
}

// checkGPUNUMA places each GPU on its NUMA node.
func checkGPUNUMA(h *Host) []Finding {
	var out []Finding
	multi := len(h.numaNodes()) > 1
	for _, d := range h.gpus().devs {
		aff := compactCPUs(d.CPUAffinity)
		f := newFinding("numa.gpu", "numa", OK, "numa_gpu.title", d.Index, d.NUMANode, aff).
			ev("/sys/bus/pci/devices/"+strings.ToLower(d.PCIBusID)+"/numa_node", strconv.Itoa(d.NUMANode))
		if d.NUMANode < 0 {
			f = f.titled("numa_gpu.title_unknown", d.Index, aff)
			if multi {
				f.Severity = Info
				f = f.why("numa_gpu.unknown.why").fix("numa_gpu.unknown.fix")
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
