// Package tune applies the host settings `torchmem doctor` recommends,
// persistently and reversibly: plan, apply, revert, status.
//
// A profile (training, inference) is data: a list of Settings, each with
// its target, the condition under which the current value is already
// fine (so the doctor's advice wins over the profile: a swappiness of 1 is
// never raised to 10), and the reason. Apply writes a journal of every
// previous file and live value under <root>/var/lib/torchmem/tune/ before it
// changes anything, and rolls back what it did when a step fails; revert
// restores every file byte for byte and every live value.
//
// API:
//
//	p, err := tune.MakePlan(opts, "training")  // what would change, and how it is persisted
//	j, err := tune.Apply(opts, p)               // opts.DryRun: nothing written
//	j, err := tune.Revert(opts)
//	st, err := tune.Status(opts)                // applied settings and drift
//	tune.DropCaches(opts)                       // one-shot, explicit, never in a profile
package tune

import (
	"slices"
	"strconv"
)

// Kind says how a setting is applied and persisted.
type Kind string

// Kinds of settings.
const (
	Sysctl Kind = "sysctl" // live /proc/sys, persisted in /etc/sysctl.d/90-torchmem.conf
	THP    Kind = "thp"    // live sysfs, persisted by a tuned profile or a systemd unit
	Limit  Kind = "limit"  // /etc/security/limits.d/90-torchmem.conf, from the next login
	Advice Kind = "advice" // shown, never applied (a /dev/shm remount)
)

// Setting is one line of a profile.
type Setting struct {
	Key    string `json:"key"` // "vm.swappiness", "thp.enabled", "limits.nofile", "dev.shm"
	Kind   Kind   `json:"kind"`
	Target string `json:"target"`
	Reason string `json:"reason"`
	// Fine reports whether the current value already meets the doctor's
	// advice, in which case the setting is left alone.
	Fine func(current string) bool `json:"-"`
	// MultiNode: only on hosts with more than one NUMA node.
	MultiNode bool `json:"-"`
	// Else are fallback targets for choice files, tried in order when the
	// kernel does not offer Target (defer+madvise arrived in 4.6; CentOS 7's
	// 3.10 has only always/madvise/never).
	Else []string `json:"-"`
	// Enough is the least value Fine accepts, when it is a bound: the plan
	// says "already enough (at least 4096)" beside a keep whose current
	// value differs from Target, instead of a bare "now 20000, target
	// 65536, keep".
	Enough string `json:"enough,omitempty"`
	// Bytes: the value is a byte count (memlock), shown in IEC units.
	Bytes bool `json:"bytes,omitempty"`
}

func atMost(n int64) func(string) bool {
	return func(cur string) bool { v, err := strconv.ParseInt(cur, 10, 64); return err == nil && v <= n }
}

func atLeast(n int64) func(string) bool {
	return func(cur string) bool {
		if cur == "unlimited" {
			return true
		}
		v, err := strconv.ParseInt(cur, 10, 64)
		return err == nil && v >= n
	}
}

func not(bad string) func(string) bool { return func(cur string) bool { return cur != bad } }

func oneOf(ok ...string) func(string) bool {
	return func(cur string) bool { return slices.Contains(ok, cur) }
}

var common = []Setting{
	{Key: "vm.overcommit_memory", Kind: Sysctl, Target: "0", Fine: not("2"),
		Reason: "strict overcommit (2) makes forking DataLoader workers of a CUDA process fail with ENOMEM"},
	{Key: "kernel.pid_max", Kind: Sysctl, Target: "4194304", Fine: atLeast(65536),
		Reason: "ranks x workers x threads exhaust 32768 PIDs"},
	{Key: "kernel.numa_balancing", Kind: Sysctl, Target: "0", Fine: oneOf("0"), MultiNode: true,
		Reason: "NUMA balancing's hinting faults hit the data path; bind ranks to their GPU's node instead"},
	{Key: "vm.zone_reclaim_mode", Kind: Sysctl, Target: "0", Fine: oneOf("0"), MultiNode: true,
		Reason: "zone reclaim stalls allocations on one node while the other has memory free"},
	{Key: "thp.enabled", Kind: THP, Target: "madvise", Fine: oneOf("madvise", "never"),
		Reason: "THP always bloats RSS and runs khugepaged compaction; madvise keeps huge pages for allocators that ask"},
	{Key: "limits.nproc", Kind: Limit, Target: "65536", Fine: atLeast(16384), Enough: "16384",
		Reason: "RLIMIT_NPROC counts threads: DataLoader workers x ranks exceed 4096"},
	{Key: "limits.nofile", Kind: Limit, Target: "65536", Fine: atLeast(4096), Enough: "4096",
		Reason: "the file_descriptor sharing strategy holds an fd per tensor in flight"},
	{Key: "limits.memlock", Kind: Limit, Target: "unlimited", Fine: oneOf("unlimited"), Bytes: true,
		Reason: "NCCL over InfiniBand/RoCE registers (locks) its buffers"},
	{Key: "dev.shm", Kind: Advice, Target: "50%",
		Reason: "DataLoader workers pass batches through /dev/shm; a remount is left to you",
		Fine:   func(cur string) bool { return cur == "ok" }},
}

// Profiles are the named setting lists.
var Profiles = map[string][]Setting{
	"training": append([]Setting{
		{Key: "vm.swappiness", Kind: Sysctl, Target: "10", Fine: atMost(10),
			Reason: "swap out idle anonymous memory only under real pressure, not to keep page cache"},
		{Key: "thp.defrag", Kind: THP, Target: "madvise", Fine: oneOf("madvise", "defer+madvise", "defer", "never"),
			Reason: "defrag=always compacts memory synchronously inside page faults"},
	}, common...),
	"inference": append([]Setting{
		{Key: "vm.swappiness", Kind: Sysctl, Target: "1", Fine: atMost(1),
			Reason: "a swapped-out model page is a latency spike on a request"},
		{Key: "thp.defrag", Kind: THP, Target: "defer+madvise", Else: []string{"madvise"}, Fine: oneOf("defer+madvise", "defer", "never"),
			Reason: "never compact in the request path; let kcompactd do it in the background"},
	}, common...),
}
