package gpu

// nvidia-smi's CSV output, with or without header and units:
//
//	index, name, uuid, pci.bus_id, memory.total [MiB], memory.used [MiB], memory.free [MiB], memory.reserved [MiB], driver_version, persistence_mode, ecc.mode.current, compute_mode
//	0, NVIDIA H200, GPU-bd4603f9-2ede-ea65-a968-b198a041ece1, 00000000:00:06.0, 143771 MiB, 0 MiB, 143156 MiB, 616 MiB, 580.159.04, Enabled, Enabled, Default
//
//	pid, process_name, used_gpu_memory [MiB]
//	517, python3, 4108 MiB
//
// nvidia-smi does not quote fields, so a comma inside a process name
// splits it: the extra cells are joined back into process_name.

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const mib = 1 << 20

// maxCSVLine bounds one line of nvidia-smi output.
const maxCSVLine = 64 << 10

// queryGPUFields is what the fallback asks --query-gpu for; memory.reserved
// is dropped on drivers whose nvidia-smi does not know it.
var queryGPUFields = []string{"index", "name", "uuid", "pci.bus_id", "memory.total", "memory.used",
	"memory.free", "memory.reserved", "driver_version", "persistence_mode", "ecc.mode.current", "compute_mode"}

// queryAppsFields is what the fallback asks --query-compute-apps for;
// process_name last, so commas in it cannot shift other columns.
var queryAppsFields = []string{"gpu_uuid", "pid", "used_gpu_memory", "process_name"}

// csvRow is one line keyed by field name (units stripped from the header).
type csvRow map[string]string

// parseSMICSV reads nvidia-smi CSV. A header line, when present, names the
// columns; otherwise fields (what was asked for) does.
func parseSMICSV(r io.Reader, fields []string) ([]csvRow, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxCSVLine)
	var rows []csvRow
	cols := fields
	first := true
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		cells := splitCells(line)
		if first && isHeader(cells) {
			cols = headerNames(cells)
			first = false
			continue
		}
		first = false
		if len(cols) > 0 && cols[len(cols)-1] == "process_name" && len(cells) > len(cols) {
			// The name is last (as queryAppsFields asks): keep it byte for
			// byte, commas and their spaces included.
			cells = strings.SplitN(line, ",", len(cols))
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
		}
		row, err := makeRow(cols, cells)
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi csv line %d: %w", lineNo, err)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("nvidia-smi csv: %w", err)
	}
	return rows, nil
}

func splitCells(line string) []string {
	cells := strings.Split(line, ",")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// isHeader: a header's first cell is a field name, a data line's is a
// number (index, pid) or a GPU UUID.
func isHeader(cells []string) bool {
	c := cells[0]
	if _, err := strconv.Atoi(c); err == nil {
		return false
	}
	return !strings.HasPrefix(c, "GPU-") && !strings.HasPrefix(c, "MIG-") && strings.IndexFunc(c, func(r rune) bool {
		return r != '.' && r != '_' && (r < 'a' || r > 'z')
	}) < 0
}

func headerNames(cells []string) []string {
	names := make([]string, len(cells))
	for i, c := range cells {
		name, _, _ := strings.Cut(c, " [")
		names[i] = name
	}
	return names
}

func makeRow(cols, cells []string) (csvRow, error) {
	if extra := len(cells) - len(cols); extra > 0 {
		k := indexOf(cols, "process_name")
		if k < 0 {
			return nil, fmt.Errorf("%d cells for %d columns", len(cells), len(cols))
		}
		joined := strings.Join(cells[k:k+extra+1], ",")
		cells = append(append(cells[:k:k], joined), cells[k+extra+1:]...)
	}
	if len(cells) < len(cols) {
		return nil, fmt.Errorf("%d cells for %d columns", len(cells), len(cols))
	}
	row := make(csvRow, len(cols))
	for i, c := range cols {
		row[c] = cells[i]
	}
	return row, nil
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

// smiAbsent is true for the placeholders nvidia-smi prints instead of a
// value: "[N/A]", "N/A", "[Not Supported]", "[Insufficient Permissions]".
func smiAbsent(v string) bool {
	return v == "" || v == "N/A" || strings.HasPrefix(v, "[")
}

// smiMiB parses "4108 MiB" or "4108" (nounits) into bytes; nil if absent.
func smiMiB(v string) (*int64, error) {
	v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "MiB"))
	if smiAbsent(v) {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return nil, fmt.Errorf("bad MiB value %q", v)
	}
	b := n * mib
	return &b, nil
}

// smiEnabled parses "Enabled"/"Disabled"; nil when absent or unknown.
func smiEnabled(v string) *bool {
	switch v {
	case "Enabled":
		t := true
		return &t
	case "Disabled":
		f := false
		return &f
	}
	return nil
}

// smiDevices turns --query-gpu rows into Devices, and returns the driver
// version they report.
func smiDevices(rows []csvRow) ([]Device, string, error) {
	var devs []Device
	driver := ""
	for i, r := range rows {
		d := Device{Index: i, Name: r["name"], UUID: r["uuid"], PCIBusID: r["pci.bus_id"], NUMANode: -1}
		if n, err := strconv.Atoi(r["index"]); err == nil {
			d.Index = n
		}
		var mem [4]*int64
		for j, f := range []string{"memory.total", "memory.used", "memory.free", "memory.reserved"} {
			v, err := smiMiB(r[f])
			if err != nil {
				return nil, "", fmt.Errorf("GPU %d %s: %w", d.Index, f, err)
			}
			mem[j] = v
		}
		d.TotalBytes, d.UsedBytes, d.FreeBytes, d.ReservedBytes = deref(mem[0]), deref(mem[1]), deref(mem[2]), mem[3]
		d.PersistenceMode = smiEnabled(r["persistence_mode"])
		d.ECCEnabled = smiEnabled(r["ecc.mode.current"])
		if cm := r["compute_mode"]; !smiAbsent(cm) {
			d.ComputeMode = cm
		}
		if v := r["driver_version"]; !smiAbsent(v) {
			driver = v
		}
		devs = append(devs, d)
	}
	return devs, driver, nil
}

// smiProcesses turns --query-compute-apps rows into Processes; uuidIndex
// maps a GPU UUID to its index (rows without gpu_uuid go to GPU 0).
func smiProcesses(rows []csvRow, uuidIndex map[string]int) ([]Process, error) {
	var out []Process
	for _, r := range rows {
		pid, err := strconv.Atoi(r["pid"])
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("compute app: bad pid %q", r["pid"])
		}
		used, err := smiMiB(r["used_gpu_memory"])
		if err != nil {
			return nil, fmt.Errorf("compute app %d: %w", pid, err)
		}
		p := Process{GPUUUID: r["gpu_uuid"], HostPID: pid, PID: pid, UsedBytes: used, Name: r["process_name"]}
		p.GPUIndex = uuidIndex[p.GPUUUID]
		out = append(out, p)
	}
	return out, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
