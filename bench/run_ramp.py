"""Ramp memory as fast as this host allows and log the cgroup's usage.

usage: run_ramp.py TARGET_BYTES

Copies 1 MiB chunks (every page written, so every page is charged to the
cgroup at once) and reads the job cgroup's usage after each chunk. Prints
at the end: the achieved rate (GB/s) and "ns:usage" pairs (wall clock,
cgroup bytes). Used by bench/run_reaction.sh.
"""
import os
import sys
import time


def usage_file():
    path = "/"
    for line in open("/proc/self/cgroup"):
        hid, ctrl, p = line.rstrip("\n").split(":", 2)
        if "memory" in ctrl.split(","):
            return "/sys/fs/cgroup/memory" + p + "/memory.usage_in_bytes"
        if hid == "0":
            path = p
    return "/sys/fs/cgroup" + path + "/memory.current"


target = int(sys.argv[1])
fd = os.open(usage_file(), os.O_RDONLY)
chunk = b"\x01" * (1 << 20)
keep, log = [], []
t0 = time.time_ns()
while len(keep) << 20 < target:
    keep.append(bytearray(chunk))
    log.append((time.time_ns(), int(os.pread(fd, 32, 0))))
dt = (time.time_ns() - t0) / 1e9
time.sleep(0.3)
print(f"{target / dt / 1e9:.2f}", " ".join(f"{t}:{u}" for t, u in log))
