package procfs

// /proc/<pid>/status, hand-parsed: prometheus/procfs has no PPid and turns a
// missing field into 0, while kernel threads have no Vm* lines and kernels
// before 4.5 have no RssAnon/RssFile/RssShmem. Sample (H200, torch 2.11):
//
//	Name:	python3
//	State:	R (running)
//	Tgid:	517
//	Pid:	517
//	PPid:	516
//	Uid:	0	0	0	0
//	NSpid:	517
//	VmHWM:	 1515412 kB
//	VmRSS:	 1515412 kB
//	RssAnon:	  944080 kB
//	RssFile:	  550592 kB
//	RssShmem:	   20740 kB
//	VmSwap:	       0 kB
//	Threads:	35

import (
	"bytes"
	"fmt"
	"strings"
)

// Status is the part of /proc/<pid>/status torchmem uses. Sizes are bytes;
// a nil size means the kernel did not print that line.
type Status struct {
	PID   int    `json:"pid"`
	Name  string `json:"name"`
	State string `json:"state"`
	PPid  int    `json:"ppid"`
	// UID is the real user id (first of the four Uid columns).
	UID int `json:"uid"`
	// NSpid lists the PID in each PID namespace, outermost first; the last
	// entry is the PID inside the process's own namespace.
	NSpid         []int   `json:"nspid,omitempty"`
	Threads       int     `json:"threads"`
	VmHWMBytes    *uint64 `json:"vm_hwm_bytes,omitempty"`
	VmRSSBytes    *uint64 `json:"vm_rss_bytes,omitempty"`
	RssAnonBytes  *uint64 `json:"rss_anon_bytes,omitempty"`
	RssFileBytes  *uint64 `json:"rss_file_bytes,omitempty"`
	RssShmemBytes *uint64 `json:"rss_shmem_bytes,omitempty"`
	VmSwapBytes   *uint64 `json:"vm_swap_bytes,omitempty"`
}

// Status reads <root>/<pid>/status.
func (f FS) Status(pid int) (Status, error) {
	path := f.pidPath(pid, "status")
	var s Status
	err := withFile(path, func(b []byte) error {
		var perr error
		if s, perr = parseStatus(b); perr != nil {
			return fmt.Errorf("parse %s: %w", path, perr)
		}
		return nil
	})
	return s, err
}

func parseStatus(b []byte) (Status, error) {
	var s Status
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		if err := s.set(k, bytes.TrimSpace(v)); err != nil {
			return Status{}, err
		}
	}
	if s.PID == 0 {
		return Status{}, fmt.Errorf("no Pid line")
	}
	return s, nil
}

// set stores one field; unknown keys are ignored.
func (s *Status) set(key []byte, v []byte) error {
	var err error
	switch string(key) { // no allocation: the compiler compares in place
	case "Name":
		s.Name = string(v)
	case "State":
		s.State, _, _ = strings.Cut(string(v), " ")
	case "Pid":
		s.PID, err = atoiField("Pid", v)
	case "PPid":
		s.PPid, err = atoiField("PPid", v)
	case "Threads":
		s.Threads, err = atoiField("Threads", v)
	case "Uid":
		first, _, _ := bytes.Cut(v, []byte("\t"))
		s.UID, err = atoiField("Uid", first)
	case "NSpid":
		s.NSpid, err = parseIntList("NSpid", v)
	case "VmHWM":
		s.VmHWMBytes, err = kBField("VmHWM", v)
	case "VmRSS":
		s.VmRSSBytes, err = kBField("VmRSS", v)
	case "RssAnon":
		s.RssAnonBytes, err = kBField("RssAnon", v)
	case "RssFile":
		s.RssFileBytes, err = kBField("RssFile", v)
	case "RssShmem":
		s.RssShmemBytes, err = kBField("RssShmem", v)
	case "VmSwap":
		s.VmSwapBytes, err = kBField("VmSwap", v)
	}
	return err
}

func atoiField(k string, v []byte) (int, error) {
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	n, ok := digits(v)
	if !ok || n > 1<<40 {
		return 0, fmt.Errorf("field %s: bad number %q", k, v)
	}
	if neg {
		return -int(n), nil
	}
	return int(n), nil
}

// digits parses a non-empty run of decimal digits without allocating.
func digits(v []byte) (uint64, bool) {
	if len(v) == 0 || len(v) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

func parseIntList(k string, v []byte) ([]int, error) {
	fields := bytes.Fields(v)
	out := make([]int, 0, len(fields))
	for _, fl := range fields {
		n, err := atoiField(k, fl)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// kBField parses "1515412 kB" into bytes.
func kBField(k string, v []byte) (*uint64, error) {
	num, unit, _ := bytes.Cut(v, []byte(" "))
	if len(unit) > 0 && string(bytes.TrimSpace(unit)) != "kB" {
		return nil, fmt.Errorf("field %s: unexpected unit %q", k, unit)
	}
	n, ok := digits(num)
	if !ok || n > (1<<54) {
		return nil, fmt.Errorf("field %s: bad size %q", k, v)
	}
	n *= 1024
	return &n, nil
}
