package gpu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

var _ Backend = (*Fake)(nil)

// Fake is a Backend that returns what it holds: for tests of packages that
// use GPUs, fed from recorded fixtures. Its fields may be changed between
// calls (a test can add a process); the methods return copies.
type Fake struct {
	InfoV    Info      `json:"info"`
	DevicesV []Device  `json:"devices"`
	ProcessV []Process `json:"processes"`
	Err      error     `json:"-"` // returned by Devices and Processes when set
	Closed   bool      `json:"-"`
}

// NewFake returns a fake holding info, devices and processes.
func NewFake(info Info, devs []Device, procs []Process) *Fake {
	if info.Backend == "" {
		info.Backend = "fake"
	}
	return &Fake{InfoV: info, DevicesV: devs, ProcessV: procs}
}

// Info returns the held Info.
func (f *Fake) Info() Info { return f.InfoV }

// Devices returns a copy of the held devices, or Err.
func (f *Fake) Devices() ([]Device, error) {
	if f.Err != nil {
		return nil, f.Err
	}
	return append([]Device(nil), f.DevicesV...), nil
}

// Processes returns a copy of the held processes, or Err.
func (f *Fake) Processes() ([]Process, error) {
	if f.Err != nil {
		return nil, f.Err
	}
	return append([]Process(nil), f.ProcessV...), nil
}

// Close marks the fake closed.
func (f *Fake) Close() error { f.Closed = true; return nil }

// NewFakeFromJSON reads {"info":{…},"devices":[…],"processes":[…]} in the
// JSON spelling of Info, Device and Process.
func NewFakeFromJSON(path string) (*Fake, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var f Fake
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if f.InfoV.Backend == "" {
		f.InfoV.Backend = "fake"
	}
	return &f, nil
}

// NewFakeFromSMIXML reads a recorded `nvidia-smi -q -x`.
func NewFakeFromSMIXML(path string) (*Fake, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	info, devs, procs, err := parseSMIXML(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	info.Backend = "fake"
	return &Fake{InfoV: info, DevicesV: devs, ProcessV: procs}, nil
}
