package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

var _ Backend = (*smiBackend)(nil)

// Runner runs a command and returns its standard output. Injected so the
// nvidia-smi fallback is tested on recorded output.
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

// ExecRunner runs the command for real; a failure carries the command's
// name and the first line of what it printed (not its arguments: a long
// --query list would push the driver's own message off a notice line).
func ExecRunner(ctx context.Context, name string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()+" "+string(out)), "\n")
		if msg == "" { // it did not start, or printed nothing
			return out, fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		return out, fmt.Errorf("%s: %w: %s", filepath.Base(name), err, msg)
	}
	return out, nil
}

// smiTimeout bounds one nvidia-smi call: a wedged driver can hang it.
const smiTimeout = 10 * time.Second

// smiBackend is the nvidia-smi fallback: slower (a process per call, tens of
// milliseconds) and in whole MiB, but present wherever the driver is.
type smiBackend struct {
	run       Runner
	path      string
	sysRoot   string
	pids      *pidMapper
	gpuFields []string
	driver    string
	cuda      *string        // read once from -q -x, on first Info
	index     map[string]int // GPU UUID -> index, from the last Devices
	// placed holds, per PCI bus id, the NUMA node and CPU affinity read
	// from sysfs the first time the device was listed: they do not change
	// while it is present, and Devices runs every tick.
	placed map[string]Device
}

// openSMI checks that nvidia-smi answers, dropping memory.reserved from the
// query when this nvidia-smi predates it.
func openSMI(run Runner, path, sysRoot string, pids *pidMapper) (*smiBackend, error) {
	b := &smiBackend{run: run, path: path, sysRoot: sysRoot, pids: pids, gpuFields: queryGPUFields,
		placed: map[string]Device{}}
	devs, err := b.Devices()
	if err != nil {
		b.gpuFields = without(queryGPUFields, "memory.reserved")
		if devs, err = b.Devices(); err != nil {
			return nil, err
		}
	}
	if len(devs) == 0 {
		return nil, errors.New("nvidia-smi lists no GPU")
	}
	return b, nil
}

func without(xs []string, drop string) []string {
	var out []string
	for _, x := range xs {
		if x != drop {
			out = append(out, x)
		}
	}
	return out
}

func (b *smiBackend) query(what string, fields []string) ([]csvRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), smiTimeout)
	defer cancel()
	out, err := b.run(ctx, b.path, "--query-"+what+"="+strings.Join(fields, ","), "--format=csv,noheader,nounits")
	if err != nil {
		return nil, err
	}
	return parseSMICSV(bytes.NewReader(out), fields)
}

// Devices runs nvidia-smi --query-gpu.
func (b *smiBackend) Devices() ([]Device, error) {
	rows, err := b.query("gpu", b.gpuFields)
	if err != nil {
		return nil, err
	}
	devs, driver, err := smiDevices(rows)
	if err != nil {
		return nil, err
	}
	b.driver = driver
	b.index = map[string]int{}
	for i := range devs {
		b.place(&devs[i])
		b.index[devs[i].UUID] = devs[i].Index
	}
	return devs, nil
}

// place sets d's NUMA node and CPU affinity from sysfs, read once per bus id.
func (b *smiBackend) place(d *Device) {
	p, ok := b.placed[d.PCIBusID]
	if !ok {
		p = Device{PCIBusID: d.PCIBusID, NUMANode: d.NUMANode, CPUAffinity: d.CPUAffinity}
		fillFromSysfs(b.sysRoot, &p)
		b.placed[d.PCIBusID] = p
	}
	d.NUMANode, d.CPUAffinity = p.NUMANode, slices.Clone(p.CPUAffinity) // each Device its own slice
}

// Processes runs nvidia-smi --query-compute-apps (one process start per
// call; the UUID to index map comes from the last Devices, read at open).
func (b *smiBackend) Processes() ([]Process, error) {
	rows, err := b.query("compute-apps", queryAppsFields)
	if err != nil {
		return nil, err
	}
	procs, err := smiProcesses(rows, b.index)
	if err != nil {
		return nil, err
	}
	b.pids.Map(procs)
	return procs, nil
}

// Info returns the driver version, and the CUDA driver version read once
// from nvidia-smi -q -x (the CSV query has no field for it).
func (b *smiBackend) Info() Info {
	if b.cuda == nil {
		cuda := ""
		ctx, cancel := context.WithTimeout(context.Background(), smiTimeout)
		defer cancel()
		if out, err := b.run(ctx, b.path, "-q", "-x"); err == nil {
			if info, _, _, err := parseSMIXML(bytes.NewReader(out)); err == nil {
				cuda = info.CUDADriverVersion
			}
		}
		b.cuda = &cuda
	}
	return Info{Backend: "nvidia-smi", DriverVersion: b.driver, CUDADriverVersion: *b.cuda}
}

// Close has nothing to release.
func (b *smiBackend) Close() error { return nil }
