#!/bin/sh
# Accuracy of the time-to-OOM projection against a real cgroup OOM kill.
# Each round: a job (bench/run_grow.py, real PyTorch CPU) grows its host
# memory at RATE MiB/s under --memory-max 1G; the rule
# `cgroup.time_to_oom below 10s -> warn` fires on the projection.
# Projected = the rule's value (seconds); actual = the cgroup's OOM
# (v1 oom_control eventfd: the cgroup_oom event; else the job's exit)
# minus the sample the rule fired on (sample_ns). Also printed: the time
# from the projection to the job's exit (what the post-mortem states).
# Usage: bench/run_time_to_oom.sh [RATE...]   (root, cgroup v1 or v2)
set -eu
cd "$(dirname "$0")/.."
PY=${PY:-/usr/bin/python3}
RATES=${*:-20 40 80}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CGO_ENABLED=0 go build -o "$TMP/torchmem" ./cmd/torchmem
cat > "$TMP/policy.yaml" <<'Y'
rules:
  - name: ttl
    metric: cgroup.time_to_oom
    below: 10s
    action: warn
Y
for r in $RATES; do
	"$TMP/torchmem" run --db "$TMP/h.db" --memory-max 1G --interval 1s --policy "$TMP/policy.yaml" \
		-- $PY bench/run_grow.py "$r" > /dev/null 2>&1 || true
	"$TMP/torchmem" show --db "$TMP/h.db" --json last > "$TMP/show.$r"
done
$PY - "$TMP" $RATES <<'P'
import json, sys
from datetime import datetime
d, rates = sys.argv[1], sys.argv[2:]
def ns(t):  # RFC 3339 with up to 9 fractional digits
    base, _, frac = t.rstrip("Z").partition(".")
    return int(datetime.fromisoformat(base + "+00:00").timestamp()) * 10**9 + int((frac + "000000000")[:9])
print("| rate | projected | actual to the OOM | error | actual to the exit | error |")
print("|---|---|---|---|---|---|")
for r in rates:
    ev = json.load(open(f"{d}/show.{r}"))["events"]
    fire = next((e for e in ev if e["kind"] == "warn" and e["data"]["rule"].startswith("ttl ")), None)
    oom = next((e for e in ev if e["kind"] in ("cgroup_oom", "cgroup_events")), None)
    end = next(e for e in ev if e["kind"] == "exit")
    if fire is None:
        print(f"| {r} MiB/s | no projection fired | | | | |"); continue
    t0, proj = fire["data"]["sample_ns"], fire["data"]["value"]
    to_oom = (ns(oom["t"]) - t0) / 1e9 if oom else float("nan")
    to_end = (ns(end["t"]) - t0) / 1e9
    err = lambda a: f"{(proj - a) / a * 100:+.1f}%"
    print(f"| {r} MiB/s | {proj:.2f} s | {to_oom:.2f} s | {err(to_oom)} | {to_end:.2f} s | {err(to_end)} |")
P
