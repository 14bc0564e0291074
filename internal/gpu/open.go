package gpu

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// DefaultLibrary is the soname NVML is loaded by; the driver installs it.
const DefaultLibrary = "libnvidia-ml.so.1"

// Options says where Open looks. Zero values mean the real host.
type Options struct {
	// SysRoot and ProcRoot: "/sys" and "/proc" unless set.
	SysRoot  string
	ProcRoot string
	// Library is the NVML library to dlopen (DefaultLibrary unless set).
	Library string
	// SMI is the nvidia-smi to run ("nvidia-smi" on PATH unless set).
	SMI string
	// Run runs nvidia-smi (ExecRunner unless set).
	Run Runner
	// NoNVML, NoSMI skip a backend (tests; `--gpu=nvidia-smi`).
	NoNVML bool
	NoSMI  bool

	lookPath bool
}

func (o *Options) defaults() {
	// Only the real runner needs a real nvidia-smi on PATH.
	o.lookPath = o.Run == nil
	if o.SysRoot == "" {
		o.SysRoot = "/sys"
	}
	if o.ProcRoot == "" {
		o.ProcRoot = "/proc"
	}
	if o.Library == "" {
		o.Library = DefaultLibrary
	}
	if o.SMI == "" {
		o.SMI = "nvidia-smi"
	}
	if o.Run == nil {
		o.Run = ExecRunner
	}
}

// Open returns the best GPU backend this host has: NVML, else nvidia-smi,
// else the no-op backend. It never fails: notice is one line for the user
// when the result is degraded ("no NVIDIA GPU: …"; "using nvidia-smi …"
// when NVML cannot load; "NVIDIA GPU on PCI but no driver access: …" when
// a device is there and neither works), "" when NVML works.
func Open(opts Options) (b Backend, notice string) {
	opts.defaults()
	found, known := ProbeNVIDIAPCI(opts.SysRoot)
	if known && !found {
		return NewNoop(), fmt.Sprintf("no NVIDIA GPU: no PCI device of vendor %s under %s", nvidiaVendor, pciDevicesDir(opts.SysRoot))
	}
	pids := newPIDMapper(opts.ProcRoot)
	nvmlErr := fmt.Errorf("NVML skipped")
	if !opts.NoNVML {
		nb, err := openNVML(opts.Library, opts.SysRoot, pids)
		if err == nil && len(nb.handles) > 0 {
			return nb, ""
		}
		if err == nil {
			_ = nb.Close()
			err = fmt.Errorf("NVML lists no GPU")
		}
		nvmlErr = err
	}
	smiErr := fmt.Errorf("nvidia-smi skipped")
	if !opts.NoSMI {
		sb, err := openSMIAt(opts, pids)
		if err == nil {
			// What is used comes first: an 80-column view cuts the rest.
			return sb, fmt.Sprintf("using nvidia-smi (slower, whole MiB): NVML unavailable: %v", nvmlErr)
		}
		smiErr = err
	}
	if found {
		return NewNoop(), fmt.Sprintf("NVIDIA GPU on PCI but no driver access: %v; %v", nvmlErr, smiErr)
	}
	return NewNoop(), fmt.Sprintf("no NVIDIA GPU: %v; %v", nvmlErr, smiErr)
}

func openSMIAt(opts Options, pids *pidMapper) (*smiBackend, error) {
	path := opts.SMI
	if opts.lookPath && filepath.Base(path) == path {
		p, err := exec.LookPath(path)
		if err != nil {
			return nil, fmt.Errorf("%s not found on PATH", path)
		}
		path = p
	}
	return openSMI(opts.Run, path, opts.SysRoot, pids)
}

var _ Backend = noop{}

type noop struct{}

// NewNoop returns the backend of a host without NVIDIA GPUs: no devices,
// no processes, no errors.
func NewNoop() Backend { return noop{} }

func (noop) Info() Info                    { return Info{Backend: "none"} }
func (noop) Devices() ([]Device, error)    { return nil, nil }
func (noop) Processes() ([]Process, error) { return nil, nil }
func (noop) Close() error                  { return nil }
