package gpu

// `nvidia-smi -q -x`, trimmed to what torchmem reads:
//
//	<nvidia_smi_log>
//		<driver_version>580.159.04</driver_version>
//		<cuda_version>13.0</cuda_version>
//		<gpu id="00000000:00:06.0">
//			<product_name>NVIDIA H200</product_name>
//			<persistence_mode>Enabled</persistence_mode>
//			<uuid>GPU-bd4603f9-2ede-ea65-a968-b198a041ece1</uuid>
//			<fb_memory_usage><total>143771 MiB</total><reserved>616 MiB</reserved>
//				<used>4117 MiB</used><free>139040 MiB</free></fb_memory_usage>
//			<compute_mode>Default</compute_mode>
//			<ecc_mode><current_ecc>Enabled</current_ecc></ecc_mode>
//			<processes><process_info><pid>517</pid><type>C</type>
//				<process_name>python3</process_name><used_memory>4108 MiB</used_memory></process_info></processes>

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxXMLBytes bounds what we read of nvidia-smi -q -x (an 8-GPU host
// prints about 250 KB).
const maxXMLBytes = 16 << 20

type smiLog struct {
	DriverVersion string   `xml:"driver_version"`
	CUDAVersion   string   `xml:"cuda_version"`
	GPUs          []smiGPU `xml:"gpu"`
}

type smiGPU struct {
	ID          string `xml:"id,attr"`
	Name        string `xml:"product_name"`
	UUID        string `xml:"uuid"`
	Persistence string `xml:"persistence_mode"`
	PCIBusID    string `xml:"pci>pci_bus_id"`
	Mem         struct {
		Total    string `xml:"total"`
		Reserved string `xml:"reserved"`
		Used     string `xml:"used"`
		Free     string `xml:"free"`
	} `xml:"fb_memory_usage"`
	ComputeMode string `xml:"compute_mode"`
	ECC         string `xml:"ecc_mode>current_ecc"`
	Procs       []struct {
		PID  string `xml:"pid"`
		Type string `xml:"type"`
		Name string `xml:"process_name"`
		Used string `xml:"used_memory"`
	} `xml:"processes>process_info"`
}

// parseSMIXML reads nvidia-smi -q -x output into Info, Devices and the
// compute processes (type C or C+G; graphics-only clients are skipped).
func parseSMIXML(r io.Reader) (Info, []Device, []Process, error) {
	var l smiLog
	dec := xml.NewDecoder(io.LimitReader(r, maxXMLBytes))
	// The DOCTYPE names an external DTD; encoding/xml never fetches it.
	dec.Strict = false
	if err := dec.Decode(&l); err != nil {
		return Info{}, nil, nil, fmt.Errorf("nvidia-smi -q -x: %w", err)
	}
	info := Info{Backend: "nvidia-smi", DriverVersion: strings.TrimSpace(l.DriverVersion), CUDADriverVersion: strings.TrimSpace(l.CUDAVersion)}
	var devs []Device
	var procs []Process
	for i, g := range l.GPUs {
		d, err := g.device(i)
		if err != nil {
			return Info{}, nil, nil, err
		}
		devs = append(devs, d)
		ps, err := g.processes(i)
		if err != nil {
			return Info{}, nil, nil, err
		}
		procs = append(procs, ps...)
	}
	return info, devs, procs, nil
}

func (g smiGPU) device(i int) (Device, error) {
	d := Device{Index: i, Name: strings.TrimSpace(g.Name), UUID: strings.TrimSpace(g.UUID), NUMANode: -1}
	d.PCIBusID = strings.TrimSpace(g.PCIBusID)
	if d.PCIBusID == "" {
		d.PCIBusID = g.ID
	}
	var mem [4]*int64
	for j, v := range []string{g.Mem.Total, g.Mem.Used, g.Mem.Free, g.Mem.Reserved} {
		b, err := smiMiB(v)
		if err != nil {
			return Device{}, fmt.Errorf("nvidia-smi -q -x: GPU %d fb_memory_usage: %w", i, err)
		}
		mem[j] = b
	}
	d.TotalBytes, d.UsedBytes, d.FreeBytes, d.ReservedBytes = deref(mem[0]), deref(mem[1]), deref(mem[2]), mem[3]
	d.PersistenceMode = smiEnabled(strings.TrimSpace(g.Persistence))
	d.ECCEnabled = smiEnabled(strings.TrimSpace(g.ECC))
	if cm := strings.TrimSpace(g.ComputeMode); !smiAbsent(cm) {
		d.ComputeMode = cm
	}
	return d, nil
}

func (g smiGPU) processes(i int) ([]Process, error) {
	var out []Process
	for _, p := range g.Procs {
		if t := strings.TrimSpace(p.Type); t != "" && !strings.Contains(t, "C") {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(p.PID))
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("nvidia-smi -q -x: GPU %d: bad pid %q", i, p.PID)
		}
		used, err := smiMiB(p.Used)
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi -q -x: GPU %d pid %d: %w", i, pid, err)
		}
		out = append(out, Process{GPUIndex: i, GPUUUID: strings.TrimSpace(g.UUID), PID: pid, HostPID: pid,
			UsedBytes: used, Name: strings.TrimSpace(p.Name)})
	}
	return out, nil
}
