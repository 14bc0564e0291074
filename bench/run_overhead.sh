#!/bin/sh
# Supervisor overhead: median optimizer step time of examples/train.py bare
# and under `torchmem run` (hook on, 1 s allocator stats, 10 Hz sampling),
# interleaved ROUNDS times; then torchmem's own peak RSS and CPU at 1 Hz.
# Usage: bench/run_overhead.sh [ROUNDS] (as root for the job cgroup)
# (SKIP_FOOTPRINT=1 skips the second part.)
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
PY=${PY:-/usr/bin/python3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CGO_ENABLED=0 go build -o "$TMP/torchmem" ./cmd/torchmem
ARGS="examples/train.py --epochs 2 --samples 20000 --step-time"
# Wall step time suffers from whatever else the host runs; the job's own
# CPU time per step (process_time) much less, so both are reported.
: > "$TMP/bare"; : > "$TMP/tm"; : > "$TMP/bare.cpu"; : > "$TMP/tm.cpu"
for i in $(seq "$ROUNDS"); do
	$PY $ARGS > "$TMP/out"
	sed -n 's/^median step time: \(.*\) ms$/\1/p' "$TMP/out" >> "$TMP/bare"
	sed -n 's/^median step cpu: \(.*\) ms$/\1/p' "$TMP/out" >> "$TMP/bare.cpu"
	"$TMP/torchmem" run --db "$TMP/h.db" --memory-max 4G --interval 100ms --hook-interval 1s -- $PY $ARGS 2>/dev/null > "$TMP/out"
	sed -n 's/^median step time: \(.*\) ms$/\1/p' "$TMP/out" >> "$TMP/tm"
	sed -n 's/^median step cpu: \(.*\) ms$/\1/p' "$TMP/out" >> "$TMP/tm.cpu"
done
med() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
low() { sort -n "$1" | head -1; }
B=$(med "$TMP/bare"); T=$(med "$TMP/tm")
echo "bare step ms:      $(tr '\n' ' ' < "$TMP/bare")-> median $B, best $(low "$TMP/bare")"
echo "torchmem step ms:  $(tr '\n' ' ' < "$TMP/tm")-> median $T, best $(low "$TMP/tm")"
awk -v b="$B" -v t="$T" 'BEGIN {printf "overhead (medians): %+.2f%%\n", (t-b)/b*100}'
awk -v b="$(low "$TMP/bare")" -v t="$(low "$TMP/tm")" 'BEGIN {printf "overhead (best runs, least disturbed by other load): %+.2f%%\n", (t-b)/b*100}'
# Paired by round (bare i, torchmem i ran back to back): the median of the
# per-round ratios and their spread, less sensitive to slow drifts of load.
paste "$TMP/bare" "$TMP/tm" | awk '{r = ($2-$1)/$1*100; printf "%.1f\n", r}' > "$TMP/ratio"
echo "per-round overhead %: $(tr '\n' ' ' < "$TMP/ratio")-> median $(med "$TMP/ratio"), range $(low "$TMP/ratio") .. $(sort -n "$TMP/ratio" | tail -1)"
BC=$(med "$TMP/bare.cpu"); TC=$(med "$TMP/tm.cpu")
echo "bare step cpu ms:     $(tr '\n' ' ' < "$TMP/bare.cpu")-> median $BC"
echo "torchmem step cpu ms: $(tr '\n' ' ' < "$TMP/tm.cpu")-> median $TC"
awk -v b="$BC" -v t="$TC" 'BEGIN {printf "overhead in the job'"'"'s CPU time per step (medians): %+.2f%%\n", (t-b)/b*100}'

# torchmem's own footprint at 1 Hz over a 30-90 s training run.
[ "${SKIP_FOOTPRINT:-}" = 1 ] && exit 0
"$TMP/torchmem" run --db "$TMP/h.db" --memory-max 4G --interval 1s -- $PY examples/train.py --epochs 10 >/dev/null 2>&1 &
TM=$!
HWM=0; CPU=0; START=$(date +%s.%N)
TCK=$(getconf CLK_TCK)
while kill -0 $TM 2>/dev/null; do
	H=$(awk '/^VmHWM/ {print $2}' /proc/$TM/status 2>/dev/null || echo 0)
	C=$(awk '{print $14+$15}' /proc/$TM/stat 2>/dev/null || echo 0)
	[ -n "$H" ] && [ "$H" -gt "$HWM" ] && HWM=$H
	[ -n "$C" ] && [ "$C" -gt "$CPU" ] && CPU=$C && END=$(date +%s.%N)
	sleep 0.5
done
wait $TM || true
awk -v h="$HWM" -v c="$CPU" -v t="$TCK" -v s="$START" -v e="$END" 'BEGIN {
	printf "torchmem peak RSS (VmHWM): %.1f MiB\n", h/1024
	printf "torchmem CPU: %.2f s over %.1f s wall = %.2f%% of one core\n", c/t, e-s, c/t/(e-s)*100 }'
