#!/usr/bin/env bash
# Compare `torchmem top --once --json` with `smem -P` on the same real
# PyTorch job: Debian's torch, a DataLoader with 32 workers (33 processes).
# Checks that the PSS figures agree within 1% and that torchmem is at least
# 10x faster, and prints the numbers in Markdown for bench/results/top.md.
#
# smem sums the per-mapping Pss lines of /proc/<pid>/smaps, each truncated
# to whole kB by the kernel; smaps_rollup (torchmem's default) rounds once.
# With ~1,800 mappings per torch process smem comes out lower by up to a few
# hundred kB a process, ~1.5% of a 10 MB worker. So the 1% agreement is
# checked method against method (torchmem --pss-from-smaps vs smem), and the
# rollup-vs-smem gap is printed beside it.
#
# Usage: bench/top-vs-smem.sh [WORKERS] [RUNS]   (defaults 32, 5)
# TORCHMEM_BIN=path uses that binary instead of building ./cmd/torchmem.
# Needs: go, smem, a python3 that imports torch (TORCHMEM_TEST_PYTHON or
# /usr/bin/python3). Run as root or as the job's owner (smaps are private).
set -euo pipefail
cd "$(dirname "$0")/.."
workers=${1:-32}
runs=${2:-5}
py=${TORCHMEM_TEST_PYTHON:-/usr/bin/python3}
command -v smem >/dev/null || { echo "smem not installed (apt-get install smem)" >&2; exit 2; }
"$py" -c 'import torch' 2>/dev/null || { echo "$py cannot import torch (apt-get install python3-torch)" >&2; exit 2; }

tmp=$(mktemp -d)
job=""
cleanup() { [ -n "$job" ] && kill "$job" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

if [ -n "${TORCHMEM_BIN:-}" ]; then
  cp "$TORCHMEM_BIN" "$tmp/torchmem"
else
  CGO_ENABLED=0 go build -o "$tmp/torchmem" ./cmd/torchmem
fi

"$py" internal/sample/testdata/train_dataloader.py "$workers" 0 >"$tmp/job.out" 2>"$tmp/job.err" &
job=$!
for _ in $(seq 1 240); do grep -q '^ready' "$tmp/job.out" && break; sleep 0.5; done
grep -q '^ready' "$tmp/job.out" || { echo "job not ready:" >&2; cat "$tmp/job.err" >&2; exit 1; }
pids="$job $(cat /proc/$job/task/$job/children)"
nprocs=$(wc -w <<<"$pids")
pidlist=$(tr ' ' ',' <<<"$pids" | sed 's/,$//')
sleep 2 # let the workers settle

ms() { local s e; s=$(date +%s%N); "$@" >"$tmp/last.out"; e=$(date +%s%N); echo $(((e - s) / 1000000)); }

tm_host=() tm_pid=() sm=()
for i in $(seq 1 "$runs"); do
  tm_host+=("$(ms "$tmp/torchmem" top --once --json)"); cp "$tmp/last.out" "$tmp/tm.json"
  tm_pid+=("$(ms "$tmp/torchmem" top --once --json --pid "$pidlist")")
  sm+=("$(ms smem -H -c 'pid pss rss' -P train_dataloader.py)"); cp "$tmp/last.out" "$tmp/smem.txt"
done
# The same method as smem (sum the smaps mappings), right before smem.
"$tmp/torchmem" top --once --json --pss-from-smaps --pid "$pidlist" >"$tmp/tm-smaps.json"
smem -H -c 'pid pss rss' -P train_dataloader.py >"$tmp/smem2.txt"
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mh=$(median "${tm_host[@]}") mp=$(median "${tm_pid[@]}") msm=$(median "${sm[@]}")

"$py" - "$tmp/tm.json" "$tmp/smem.txt" "$tmp/tm-smaps.json" "$tmp/smem2.txt" "$job" "$mh" "$mp" "$msm" "$nprocs" <<'PY'
import json, sys
tm_file, smem_file, tm2_file, smem2_file, root, mh, mp, msm, n = sys.argv[1:]
root, mh, mp, msm, n = int(root), int(mh), int(mp), int(msm), int(n)

def job_of(path):
    return next(j for j in json.load(open(path))["jobs"] if j["root_pid"] == root)

def compare(tm_path, smem_path):
    job = job_of(tm_path)
    tm = {p["pid"]: p["pss_bytes"] // 1024 for p in job["processes"]}
    sm = {}
    for line in open(smem_path):
        f = line.split()
        if len(f) == 3 and int(f[0]) in tm:
            sm[int(f[0])] = int(f[1])
    common = sorted(set(tm) & set(sm))
    worst = max(abs(tm[p] - sm[p]) / max(sm[p], 1) for p in common)
    tsum, ssum = sum(tm[p] for p in common), sum(sm[p] for p in common)
    return job, len(common), worst, tsum, ssum

job, matched, worst_r, tsum, ssum = compare(tm_file, smem_file)
_, matched2, worst_s, tsum2, ssum2 = compare(tm2_file, smem2_file)
rss = job["totals"]["rss_bytes"] // 1024
print(f"| processes in job | {n} (torchmem grouped {len(job['processes'])}, smem matched {matched}) |")
print(f"| summed RSS (torchmem) | {rss/1024:.0f} MiB |")
print(f"| summed PSS, torchmem (smaps_rollup) / smem | {tsum/1024:.1f} MiB / {ssum/1024:.1f} MiB ({100*abs(tsum-ssum)/ssum:.2f}% apart; worst process {100*worst_r:.2f}%) |")
print(f"| summed PSS, torchmem --pss-from-smaps / smem | {tsum2/1024:.1f} MiB / {ssum2/1024:.1f} MiB ({100*abs(tsum2-ssum2)/ssum2:.2f}% apart; worst process {100*worst_s:.2f}%) |")
worst = worst_s
print(f"| `torchmem top --once --json` (whole host), median | {mh} ms |")
print(f"| `torchmem top --once --json --pid …` (the job only), median | {mp} ms |")
print(f"| `smem -c 'pid pss rss' -P train_dataloader.py`, median | {msm} ms |")
print(f"| speed-up (whole host / job only) | {msm/max(mh,1):.1f}x / {msm/max(mp,1):.1f}x |")
ok = matched == n and matched2 == n and worst <= 0.01 and msm >= 10 * mh
print(f"\nresult: {'PASS' if ok else 'FAIL'} (PSS within 1%: {worst <= 0.01}, >=10x faster: {msm >= 10*mh})")
sys.exit(0 if ok else 1)
PY
