package oomexplain

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/torchmem/torchmem/internal/kmsg"
)

// ParseLines parses lines already read by a kmsg reader (timestamps kept).
func ParseLines(lines []kmsg.Line, opts Options) []Incident {
	p := NewParser(opts)
	for _, l := range lines {
		p.Feed(l)
	}
	return p.Close()
}

// LogConfig says which part of this boot's kernel log to read; callers
// need not know the log's sources (internal/kmsg owns them).
type LogConfig struct {
	// Since skips lines logged before it (zero: the whole boot).
	Since time.Time
	// OnlyNew (with Follow) starts at the end of the log.
	OnlyNew bool
	// ProcRoot is where /proc is (boot time, boot id); "" for /proc.
	ProcRoot string
}

// ErrNoKernelLog: no kernel log source is readable (not root, no journal
// access, dmesg restricted).
var ErrNoKernelLog = kmsg.ErrNotPresent

func (c LogConfig) kmsg() kmsg.Config {
	return kmsg.Config{Since: c.Since, OnlyNew: c.OnlyNew, ProcRoot: c.ProcRoot}
}

// ReadKernel reads this boot's kernel log at or after cfg.Since (from
// /dev/kmsg, journalctl -k or dmesg, whichever works; cfg.Follow is
// ignored) and returns its incidents and the source's name. This is what
// a post-mortem calls: ReadKernel(ctx, LogConfig{Since: jobStart}, ...)
// and then Filter(incs, time.Time{}, jobPIDs).
func ReadKernel(ctx context.Context, lc LogConfig, opts Options) ([]Incident, string, error) {
	res, src, err := ReadKernelAll(ctx, lc, opts)
	return res.Incidents, src, err
}

// ReadKernelAll is ReadKernel with the count of incidents dropped past
// Options.MaxIncidents.
func ReadKernelAll(ctx context.Context, lc LogConfig, opts Options) (Result, string, error) {
	r, err := kmsg.Open(ctx, lc.kmsg())
	if err != nil {
		return Result{}, "", err
	}
	defer r.Close()
	if opts.Source == "" {
		opts.Source = r.Source()
	}
	p := NewParser(opts)
	for {
		ln, err := r.Next()
		if err == io.EOF || err != nil {
			res := Result{Incidents: p.Close(), Dropped: p.Dropped()}
			if err != io.EOF {
				err = fmt.Errorf("read %s: %w", r.Source(), err)
			} else {
				err = nil
			}
			return res, r.Source(), err
		}
		p.Feed(ln)
	}
}

// Filter keeps the incidents at or after since (those whose log gives no
// time are kept: nothing says they are older) and, when pids is not empty,
// those about one of pids. Call it before Correlate/ExplainAll: Related
// holds indexes into the slice.
func Filter(incs []Incident, since time.Time, pids []int) []Incident {
	var out []Incident
	for _, inc := range incs {
		if !since.IsZero() && inc.Time != nil && inc.Time.Before(since) {
			continue
		}
		if len(pids) > 0 && !anyPID(inc.PIDs, pids) {
			continue
		}
		out = append(out, inc)
	}
	return out
}

func anyPID(have, want []int) bool {
	for _, p := range want {
		if hasInt(have, p) {
			return true
		}
	}
	return false
}

// Follow reads the kernel log from cfg (cfg.Follow is set: it keeps
// reading until ctx ends) and calls emit with each incident as soon as it
// is complete, explained with ctx's facts about this host. Memory stays
// bounded: the parser keeps no incident after reporting it. It returns
// when ctx ends (nil) or the log cannot be read.
func Follow(ctx context.Context, lc LogConfig, opts Options, host Context, emit func(Incident)) error {
	cfg := lc.kmsg()
	cfg.Follow = true
	r, err := kmsg.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer r.Close()
	if opts.Source == "" {
		opts.Source = r.Source()
	}
	host.SameHost = true // the live kernel log is this host's
	opts.MaxIncidents = 1
	opts.OnIncident = func(inc *Incident) {
		one := []Incident{*inc}
		ExplainAll(one, host)
		emit(one[0])
	}
	p := NewParser(opts)
	for {
		ln, err := r.Next()
		if err != nil {
			p.Close()
			if ctx.Err() != nil || err == io.EOF {
				return nil
			}
			return fmt.Errorf("read %s: %w", r.Source(), err)
		}
		p.Feed(ln)
	}
}
