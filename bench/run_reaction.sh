#!/bin/sh
# Reaction time from a cgroup usage threshold crossing to the policy action
# (event-driven: cgroup v1 usage-threshold eventfd), with a job ramping
# memory at >= 1 GB/s. Each round: threshold at 256 MiB above the job's
# starting usage, ramp to 768 MiB, action = warn. The crossing time is when
# the ramp had touched enough bytes (its own log); the action time is the
# at_ns the supervisor stored in the warn event.
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
    base, rate, pairs = int(f[0]), float(f[1]), [tuple(map(int, p.split(":"))) for p in f[2:]]
    rates.append(rate)
    cross = next((t for t, b in pairs if base + b >= thr), None)
    ev = [e for e in json.load(open(f"{d}/show.{i}"))["events"] if e["kind"] == "warn"]
    if cross is None or not ev:
        print(f"round {i}: no crossing or no action"); continue
    out.append((ev[0]["data"]["at_ns"] - cross) / 1e6)
out.sort()
print("ramp rate GB/s:", " ".join(f"{r:.2f}" for r in rates))
print("reaction ms:", " ".join(f"{x:.2f}" for x in out))
print(f"median {out[len(out)//2]:.2f} ms, max {out[-1]:.2f} ms over {len(out)} rounds")
P
