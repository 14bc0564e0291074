#!/bin/sh
# Benchmark `torchmem oom` on a mixed kernel + training log generated on the
# fly (never written to disk): throughput and peak memory.
#
#   bench/oom.sh [SIZE [EVERY]]   run from the repository root; SIZE defaults
#                                 to 1G, one real incident every EVERY (1M)
set -eu
size=${1:-1G}
every=${2:-1M}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/torchmem" ./cmd/torchmem
go build -o "$tmp/oomgen" ./bench/oomgen
bytes=$("$tmp/oomgen" -size "$size" -every "$every" | wc -c)
start=$(date +%s.%N)
"$tmp/oomgen" -size "$size" -every "$every" -testdata internal/oomexplain/testdata |
	/usr/bin/time -f '%e s wall, %U s user, %S s sys, %M KB max RSS' -o "$tmp/time" \
		"$tmp/torchmem" oom --json - >"$tmp/out.json"
end=$(date +%s.%N)
incidents=$(grep -c '"kind":' "$tmp/out.json" || true)
reports=$(grep -o '"count": [0-9]*' "$tmp/out.json" | awk '{ n += $2 } END { print n + 0 }')
dropped=$(grep -o '"dropped": [0-9]*' "$tmp/out.json" | head -1 | awk '{ print $2 + 0 }')
echo "input:      $bytes bytes ($size), $incidents incidents after grouping repeats ($reports reports), ${dropped:-0} past the cap"
echo "torchmem:   $(cat "$tmp/time")"
awk -v b="$bytes" -v s="$start" -v e="$end" 'BEGIN { printf "throughput: %.0f MB/s (wall, generator included)\n", b / (e - s) / 1e6 }'
awk -v b="$bytes" -v t="$(cut -d' ' -f4 "$tmp/time")" -v y="$(cut -d' ' -f7 "$tmp/time")" \
	'BEGIN { printf "cpu:        %.0f MB/s of torchmem user+sys time\n", b / (t + y) / 1e6 }'
