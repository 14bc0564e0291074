#!/bin/sh
# Reaction time from a cgroup usage threshold crossing to the policy action
# (event-driven: cgroup v1 usage-threshold eventfd), with a job ramping
# memory as fast as the host allows (>= 1 GB/s on an idle host). Each
# round: the job ramps to 768 MiB, reading its cgroup usage after every
# MiB; the rule warns at 300 MiB of cgroup
# usage. The crossing time is interpolated between the job's two usage
# readings around 300 MiB; the action time is the at_ns the supervisor
# stored in the warn event.
# Usage: bench/run_reaction.sh [ROUNDS]   (root, cgroup v1 or v2)
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${1:-15}
PY=${PY:-python3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CGO_ENABLED=0 go build -o "$TMP/torchmem" ./cmd/torchmem
cat > "$TMP/policy.yaml" <<'Y'
rules:
  - name: ramp
    metric: cgroup.usage_bytes
    above: 300M
    action: warn
Y
for i in $(seq "$ROUNDS"); do
	"$TMP/torchmem" run --db "$TMP/h.db" --no-hook --memory-max 2G --interval 1s --policy "$TMP/policy.yaml" \
		-- $PY bench/run_ramp.py 805306368 > "$TMP/ramp.$i" 2>/dev/null
	"$TMP/torchmem" show --db "$TMP/h.db" --json last > "$TMP/show.$i"
done
$PY - "$TMP" "$ROUNDS" <<'P'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
thr = 300 << 20
out, rates = [], []
for i in range(1, n + 1):
    f = open(f"{d}/ramp.{i}").read().split()
    rate, pairs = float(f[0]), [tuple(map(int, p.split(":"))) for p in f[1:]]
    rates.append(rate)
    cross = None
    for (t0, u0), (t1, u1) in zip(pairs, pairs[1:]):
        if u0 < thr <= u1:
            cross = t0 + (t1 - t0) * (thr - u0) / (u1 - u0)
            break
    ev = [e for e in json.load(open(f"{d}/show.{i}"))["events"] if e["kind"] == "warn"]
    if cross is None or not ev:
        print(f"round {i}: no crossing or no action"); continue
    out.append((ev[0]["data"]["at_ns"] - cross) / 1e6)
out.sort()
print("ramp rate GB/s:", " ".join(f"{r:.2f}" for r in rates))
print("reaction ms:", " ".join(f"{x:.2f}" for x in out))
print(f"median {out[len(out)//2]:.2f} ms, max {out[-1]:.2f} ms over {len(out)} rounds")
P
