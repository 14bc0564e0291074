// Package cgroup reads the memory state of a control group — the read side
// only; internal/jobcgroup creates, limits and kills job cgroups. It works on
// cgroup v1, hybrid (v1 controllers plus a unified mount) and v2 hosts, with
// every root injected so tests run against fixture trees.
//
// The files are simple enough that a hand-written reader is smaller than
// adapting containerd/cgroups' managers, which resolve mounts from the live
// /proc/self/mountinfo and cannot be pointed at a fixture tree.
//
// Exported API:
//
//	Detect(mountinfoPath string) (Hierarchy, error)   // mode and mounts, from /proc/self/mountinfo
//	ParseMountinfo(r io.Reader) (Hierarchy, error)
//	(Hierarchy) Mode                                  // ModeV1, ModeHybrid, ModeV2 (ModeNone: no cgroups)
//	(Hierarchy) MemoryDir(path string) (dir string, v2 bool, err error)
//	(*Hierarchy) Rebase(sysRoot string)               // mount points under /sys onto an injected SysRoot
//	ProcessPath(procRoot string, pid int) (Path, error) // the process's memory cgroup
//	ParseProcessPath(s string) (Path, error)            // the same, from a /proc/<pid>/cgroup text
//	(Hierarchy) ReadMemory(path string) (Memory, error) // limits, usage, peak, events, swap, PSI
//	ReadMemoryDir(dir string, v2 bool) (Memory, error)
//	ReadEvents(dir string, v2 bool) (Events, error)   // only the event counters
//	(Memory) Headroom() (bytes uint64, limited bool)  // max - usage
//	Limit{Bytes, Unlimited}                           // JSON: a number or "max"
//
// "No limit" is explicit: Limit.Unlimited is true for v2's "max" and for
// v1's 9223372036854771712 (PAGE_COUNTER_MAX in bytes) and larger values.
// A file a kernel does not have (memory.peak before 5.19, memory.high on
// v1) leaves its field nil: missing is not zero.
package cgroup
