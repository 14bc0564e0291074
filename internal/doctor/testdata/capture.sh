#!/usr/bin/env bash
# capture.sh DEST — copy the files torchmem doctor reads from this host into
# a fixture tree DEST/{proc,sys,root}. Used once to make testdata/debian12.
# The kernel command line is reduced to its psi= argument (the rest named
# the machine's hypervisor); nothing else is changed.
set -euo pipefail
dest=${1:?usage: capture.sh DEST}
copy() { # copy SRC DST: one file, parents created; missing files skipped
	[[ -r $1 ]] || return 0
	mkdir -p "$(dirname "$2")"
	cat "$1" >"$2"
}
for f in sys/vm/swappiness sys/vm/overcommit_memory sys/vm/overcommit_ratio sys/vm/min_free_kbytes \
	sys/vm/zone_reclaim_mode sys/kernel/numa_balancing sys/kernel/pid_max sys/kernel/threads-max \
	sys/kernel/osrelease sys/kernel/hostname meminfo pressure/memory vmstat cgroups \
	self/limits self/status self/cgroup self/mountinfo self/smaps_rollup; do
	copy "/proc/$f" "$dest/proc/$f"
done
grep -o 'psi=[0-9]' /proc/cmdline >"$dest/proc/cmdline" || echo >"$dest/proc/cmdline"
for f in kernel/mm/transparent_hugepage/enabled kernel/mm/transparent_hugepage/defrag \
	kernel/mm/transparent_hugepage/shmem_enabled module/zswap/parameters/enabled; do
	copy "/sys/$f" "$dest/sys/$f"
done
for n in /sys/devices/system/node/node[0-9]*; do
	copy "$n/cpulist" "$dest/sys/devices/system/node/$(basename "$n")/cpulist"
	copy "$n/meminfo" "$dest/sys/devices/system/node/$(basename "$n")/meminfo"
done
cg=$(sed -n 's/^[0-9]*:memory:\(.*\)/\1/p' /proc/self/cgroup)
if [[ -n $cg && -d /sys/fs/cgroup/memory$cg ]]; then
	for f in memory.limit_in_bytes memory.usage_in_bytes memory.max_usage_in_bytes memory.memsw.limit_in_bytes \
		memory.memsw.usage_in_bytes memory.oom_control memory.failcnt; do
		copy "/sys/fs/cgroup/memory$cg/$f" "$dest/sys/fs/cgroup/memory$cg/$f"
	done
fi
copy /etc/os-release "$dest/root/etc/os-release"
