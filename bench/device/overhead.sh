#!/usr/bin/env bash
# overhead.sh — step-time overhead of `torchmem run` on a real CUDA loop
# (issue 23 item 5, the <= 1% goal): ROUNDS (default 10) interleaved
# rounds of the same job bare, under `torchmem run` (hook on, 1 s hook
# stats, 10 Hz sampling) and under `torchmem run --record-history`; each
# run prints its median CUDA-synchronised step time after 10 warm-up steps
# (bench/device/cuda_train.py). Reports the median and the spread
# (min..max) of the per-run medians and the overhead of the medians.
# Interleaving (bare, run, history, bare, ...) spreads clock and thermal
# drift over all three variants instead of biasing the last one.
#   run(command="bash bench/device/overhead.sh", carry=["torchmem"], timeout_s=420)
# Locally on any CUDA host: OUT=/tmp/oh bash bench/device/overhead.sh
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-./device-check-out}
mkdir -p "$OUT"
TM=${TM:-./torchmem}
PY=${PY:-python3}
ROUNDS=${ROUNDS:-10}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-4}
WORK=$(mktemp -d /tmp/torchmem-oh.XXXXXX)
DB=$WORK/h.db
T0=$(date +%s)
job() { timeout 60 "$@" 2>/dev/null | sed -n 's/^median step time: \(.*\) ms$/\1/p'; }
for i in $(seq "$ROUNDS"); do
	if [ $(($(date +%s) - T0)) -gt 330 ]; then
		echo "round $i skipped: the script is at $(($(date +%s) - T0)) s" >>"$OUT/overhead.txt"
		break
	fi
	job "$PY" bench/device/cuda_train.py --seconds "$SECONDS_PER_RUN" >>"$WORK/bare"
	job "$TM" run --db "$DB" --interval 100ms --hook-interval 1s --memory-max 16G \
		-- "$PY" bench/device/cuda_train.py --seconds "$SECONDS_PER_RUN" >>"$WORK/run"
	job "$TM" run --db "$DB" --interval 100ms --hook-interval 1s --memory-max 16G --record-history 100000 \
		-- "$PY" bench/device/cuda_train.py --seconds "$SECONDS_PER_RUN" >>"$WORK/history"
done
stats() { sort -n "$1" | awk '{a[NR]=$1} END {if (NR) printf "median %.3f ms (min %.3f, max %.3f, n %d)", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[1], a[NR], NR; else printf "no step times"}'; }
med() { sort -n "$1" | awk '{a[NR]=$1} END {if (NR) print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
{
	echo "host: $(hostname) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $(date -u +%FT%TZ)"
	echo "bare:                  $(stats "$WORK/bare")"
	echo "torchmem run:          $(stats "$WORK/run")"
	echo "run --record-history:  $(stats "$WORK/history")"
	for v in run history; do
		awk -v b="$(med "$WORK/bare")" -v t="$(med "$WORK/$v")" -v v="$v" 'BEGIN {if (b > 0) printf "overhead %-8s %+.2f%% (medians)\n", v":", (t-b)/b*100; else print "overhead: FAILED (no step times)"}'
	done
	echo "total $(($(date +%s) - T0)) s"
} | tee -a "$OUT/overhead.txt"
rm -rf "$WORK"
