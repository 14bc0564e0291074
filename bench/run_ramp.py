"""Ramp memory at full speed and log when each MiB was touched.

Prints one line at the end: the cgroup usage before the ramp (bytes), the
ramp rate (GB/s) and then "ns:bytes" pairs (wall clock, bytes touched).
Used by bench/run_reaction.sh.
"""
import sys
import time

target = int(sys.argv[1])
usage = 0
for line in open("/proc/self/cgroup"):
    parts = line.strip().split(":", 2)
    if "memory" in parts[1].split(","):
        try:
            usage = int(open("/sys/fs/cgroup/memory" + parts[2] + "/memory.usage_in_bytes").read())
        except OSError:
            pass
    elif parts[0] == "0" and not usage:
        try:
            usage = int(open("/sys/fs/cgroup" + parts[2] + "/memory.current").read())
        except OSError:
            pass
chunk = b"\x01" * (1 << 20)
keep, log = [], []
t0 = time.time_ns()
while len(keep) << 20 < target:
    keep.append(bytearray(chunk))  # copies: every page touched
    log.append((time.time_ns(), len(keep) << 20))
dt = (time.time_ns() - t0) / 1e9
time.sleep(0.5)
print(usage, f"{target / dt / 1e9:.2f}", " ".join(f"{t}:{b}" for t, b in log))
