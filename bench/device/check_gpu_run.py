#!/usr/bin/env python3
"""Checks of bench/device-check.sh that compare torchmem's figures with the
driver's, run on the GPU host after the CUDA steps (standard library only:
the host has no network and no pip).

    check_gpu_run.py top TOP.json SMI.csv METRICS.txt HOLDER_PID
        per-process GPU memory in `torchmem top --json` vs nvidia-smi
        --query-compute-apps taken at the same moment; the training job's
        DataLoader workers inside its job; the holder in another job; the
        job's GPU series present in `torchmem serve`'s /metrics.
    check_gpu_run.py threshold REPORT.json
        the --gpu-threshold crossing (a policy cleanup event), the hook's
        ack with the bytes freed, and the time between them.

Prints one "PASS|FAILED name: detail" line per check; exits 1 if any failed.
"""
import json
import sys
from datetime import datetime

MIB = 1 << 20
# nvidia-smi prints whole MiB; NVML's per-process figure is in bytes and is
# the same counter, so they agree to the MiB (1 MiB of rounding each way).
SMI_TOLERANCE = 1 * MIB

failed = []


def result(ok, name, detail):
    print("%s %s: %s" % ("PASS  " if ok else "FAILED", name, detail))
    if not ok:
        failed.append(name)


def read_smi(path):
    """pid -> used bytes from `nvidia-smi --query-compute-apps=pid,used_memory
    --format=csv,noheader,nounits` (MiB)."""
    out = {}
    for line in open(path):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            out[int(parts[0])] = out.get(int(parts[0]), 0) + int(parts[1]) * MIB
    return out


def check_top(top_path, smi_path, metrics_path, holder):
    top = json.load(open(top_path))
    smi = read_smi(smi_path)
    procs = {}
    for p in (top.get("gpu") or {}).get("processes") or []:
        pid = p.get("host_pid") or p.get("pid")
        procs[pid] = procs.get(pid, 0) + (p.get("used_bytes") or 0)
    result(bool(smi), "smi-has-processes", "%d compute app(s) in nvidia-smi" % len(smi))
    for pid, used in sorted(smi.items()):
        got = procs.get(pid)
        ok = got is not None and abs(got - used) <= SMI_TOLERANCE
        result(ok, "gpu-bytes pid %d" % pid, "nvidia-smi %.0f MiB, torchmem %s" % (
            used / MIB, "missing" if got is None else "%.1f MiB" % (got / MIB)))
    jobs = top.get("jobs") or []
    train = [j for j in jobs if "cuda_train.py" in j.get("command", "") and "--hold-gib" not in j.get("command", "")]
    holder_jobs = [j for j in jobs if any(p.get("pid") == holder for p in j.get("processes") or [])]
    result(len(train) == 1, "training-job-found", "%d job(s) run cuda_train.py" % len(train))
    if train:
        j = train[0]
        roles = [p.get("role") for p in j.get("processes") or []]
        workers = [p for p in j.get("processes") or [] if p.get("depth", 0) > 0 and p.get("torch")]
        result(len(workers) >= 2, "workers-in-job", "job %s: roles %s" % (j.get("id"), roles))
        pids = {p.get("pid") for p in j.get("processes") or []}
        want = sum(v for k, v in smi.items() if k in pids)
        got = (j.get("totals") or {}).get("gpu_bytes", 0)
        result(abs(got - want) <= SMI_TOLERANCE * max(1, len(pids)), "job-gpu-total",
               "job %.1f MiB, nvidia-smi over its pids %.0f MiB" % (got / MIB, want / MIB))
        result(holder not in pids, "holder-not-in-job", "holder pid %d" % holder)
    result(len(holder_jobs) == 1 and (not train or holder_jobs[0].get("id") != train[0].get("id")),
           "holder-own-job", "%d job(s) hold pid %d" % (len(holder_jobs), holder))
    text = open(metrics_path).read()
    gpu_lines = [l for l in text.splitlines() if l.startswith("torchmem_") and "gpu" in l.split("{")[0]]
    result(len(gpu_lines) > 0, "serve-gpu-series", "%d torchmem GPU sample line(s) in /metrics" % len(gpu_lines))


def when(s):
    # RFC 3339 with nanoseconds: keep microseconds for fromisoformat (3.6 has no
    # fromisoformat with offsets; the host's python is recent, but stay plain).
    s = s.replace("Z", "+00:00")
    head, _, rest = s.partition(".")
    frac, tz = rest[:6], rest[rest.find("+") if "+" in rest else len(rest):]
    return datetime.strptime(head + "." + (frac.split("+")[0] or "0").ljust(6, "0") + tz.replace(":", ""),
                             "%Y-%m-%dT%H:%M:%S.%f%z")


def check_threshold(report_path):
    rep = json.load(open(report_path))
    events = rep.get("events") or []
    cross = [e for e in events if e.get("source") == "policy" and e.get("kind") == "cleanup"]
    result(bool(cross), "threshold-fired", "%d policy cleanup event(s)" % len(cross))
    if not cross:
        return
    t0 = when(cross[0]["t"])
    acks = [e for e in events if e.get("kind") == "ack" and (e.get("data") or {}).get("cmd") == "cleanup"
            and when(e["t"]) >= t0]
    result(bool(acks), "cleanup-acked", "%d cleanup ack(s) after the crossing" % len(acks))
    if not acks:
        return
    a = acks[0]
    freed = (a.get("data") or {}).get("freed") or 0
    dt = (when(a["t"]) - t0).total_seconds()
    result(freed > 0, "cleanup-freed", "%.1f GiB of GPU cache freed, %.3f s after the crossing (%s)" % (
        freed / 2**30, dt, cross[0].get("message", "")[:160]))


def main(argv):
    if len(argv) == 6 and argv[1] == "top":
        check_top(argv[2], argv[3], argv[4], int(argv[5]))
    elif len(argv) == 3 and argv[1] == "threshold":
        check_threshold(argv[2])
    else:
        sys.exit(__doc__)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
