package sample

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/jobs"
)

// gpuUse is one PID's memory over all GPUs.
type gpuUse struct {
	bytes   *int64
	indexes []int
}

// readGPU asks the backend; a failure is recorded in g.Error, not returned.
// Devices and Processes are never nil, so JSON has [] rather than null on a
// host without GPUs (jq's .gpu.devices[] fails on null).
func (s *Sampler) readGPU(g *GPU) map[int]gpuUse {
	g.Info = s.opts.GPU.Info()
	g.Devices, g.Processes = []gpu.Device{}, []gpu.Process{}
	devs, err := s.opts.GPU.Devices()
	if err != nil {
		g.Error = err.Error()
		return nil
	}
	procs, err := s.opts.GPU.Processes()
	if err != nil {
		g.Error = err.Error()
	}
	if devs != nil {
		g.Devices = devs
	}
	if procs != nil {
		g.Processes = procs
	}
	return gpuByPID(procs)
}

func gpuByPID(procs []gpu.Process) map[int]gpuUse {
	by := map[int]gpuUse{}
	for _, p := range procs {
		if p.PID == 0 {
			continue // not mapped into our PID namespace: shown in GPU.Processes only
		}
		u := by[p.PID]
		if p.UsedBytes != nil {
			sum := *p.UsedBytes
			if u.bytes != nil {
				sum += *u.bytes
			}
			u.bytes = &sum
		}
		u.indexes = append(u.indexes, p.GPUIndex)
		by[p.PID] = u
	}
	return by
}

// buildJobs turns trees into Jobs with figures, totals and cgroup state.
func (s *Sampler) buildJobs(trees []jobs.Tree, gpuBy map[int]gpuUse, now time.Time, gpuSource string) []Job {
	out := make([]Job, 0, len(trees))
	cgs := map[string]*cgroup.Memory{} // jobs sharing a cgroup read its files once per Collect
	for _, t := range trees {
		j := jobs.Job{ID: "pid:" + strconv.Itoa(t.RootPID), RootPID: t.RootPID}
		for _, m := range t.Members {
			ps := s.procs[m.PID]
			if ps == nil {
				continue
			}
			j.Processes = append(j.Processes, s.process(m, ps, gpuBy[m.PID], now))
		}
		if len(j.Processes) == 0 {
			continue
		}
		j.Command = jobs.CommandLine(j.Processes[0].Cmdline, j.Processes[0].Name)
		j.Total(gpuSource)
		job := Job{Job: j}
		s.attachCgroup(&job, cgs)
		out = append(out, job)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].RootPID < out[b].RootPID })
	return out
}

func (s *Sampler) process(m jobs.Member, ps *procState, g gpuUse, now time.Time) jobs.Process {
	st := ps.status
	p := jobs.Process{
		PID: m.PID, PPid: st.PPid, Name: st.Name, Cmdline: ps.cmdline, Role: m.Role, Depth: m.Depth,
		Torch: ps.torch, UID: st.UID,
		RSSBytes: st.VmRSSBytes, RSSAnonBytes: st.RssAnonBytes, RSSFileBytes: st.RssFileBytes,
		RSSShmemBytes: st.RssShmemBytes, SwapBytes: st.VmSwapBytes,
		GPUBytes: g.bytes, GPUIndexes: g.indexes,
	}
	if p.Cmdline == nil {
		p.Cmdline = []string{}
	}
	if ps.pss != nil {
		r := ps.pss
		age := now.Sub(ps.pssAt).Seconds()
		p.PSSBytes, p.USSBytes, p.SwapPSSBytes = &r.PssBytes, &r.USSBytes, &r.SwapPssBytes
		p.PrivateDirtyBytes = &r.PrivateDirtyBytes
		p.PSSSource, p.PSSAgeSeconds = r.Source, &age
	}
	if ps.oom != nil {
		p.OOMScore, p.OOMScoreAdj = &ps.oom.Score, &ps.oom.Adj
	}
	return p
}

// attachCgroup reads the memory cgroup of the job: Options.CgroupPath when
// given, else the root process's. read holds the cgroups this Collect has
// read already (nil: unreadable), keyed by path.
func (s *Sampler) attachCgroup(j *Job, read map[string]*cgroup.Memory) {
	if s.opts.NoCgroup || s.hierErr != nil || s.hier.Mode == cgroup.ModeNone {
		return
	}
	path := s.opts.CgroupPath
	if path == "" {
		ps := s.procs[j.RootPID]
		if ps == nil {
			return
		}
		if ps.cg == nil {
			p, err := cgroup.ProcessPath(s.opts.ProcRoot, j.RootPID)
			if err != nil {
				return // vanished since the scan
			}
			ps.cg = &p
		}
		path = ps.cg.Path
	}
	mp, done := read[path]
	if !done {
		mp = s.readCgroup(path)
		read[path] = mp
	}
	if mp == nil {
		return
	}
	m := *mp // each job its own copy
	j.Cgroup = &m
	if h, ok := m.Headroom(); ok {
		j.CgroupHeadroomBytes = &h
	}
}

// readCgroup reads the memory state of the cgroup at path; nil when it
// cannot be read (one notice says so, not one per job and tick).
func (s *Sampler) readCgroup(path string) *cgroup.Memory {
	m, err := s.hier.ReadMemory(path)
	if err != nil {
		if !s.cgErrNoted {
			s.cgErrNoted = true
			s.notice(fmt.Sprintf("cgroup: cannot read the memory cgroup of some jobs (%v)", err))
		}
		return nil
	}
	return &m
}
