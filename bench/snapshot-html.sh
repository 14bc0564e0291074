#!/bin/sh
# The snapshot page's load time in headless Chromium (issue 16: a 170k-entry
# trace ready in < 1.5 s): generates a snapshot of SIZE (default 35M: 10
# copies of the real GPT-2 trace, 175,750 entries), writes its page with
# `torchmem snapshot html`, and loads it RUNS times (default 7) with
# chromedp (TestHTMLLoadTime: navigation until the page has drawn every
# view), printing each time and the median.
#
#   bench/snapshot-html.sh [SIZE] [RUNS]
#
# Env: TORCHMEM (binary; default: built from ./cmd/torchmem), WORK (scratch
# dir; default a mktemp dir, removed at the end).
set -eu
cd "$(dirname "$0")/.."
SIZE=${1:-35M}
RUNS=${2:-7}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
if [ -z "${TORCHMEM:-}" ]; then
	TORCHMEM=$WORK/torchmem
	CGO_ENABLED=0 go build -o "$TORCHMEM" ./cmd/torchmem
fi
SRC=internal/snapshot/testdata/real/train_gpt2_bf16.pickle.gz
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./bench/snapshotgen -in "$SRC" -size "$SIZE" -o "$WORK/snap.pickle"
/usr/bin/time -f 'html: %e s wall, %U s user, %M KB peak RSS' "$TORCHMEM" snapshot html "$WORK/snap.pickle" -o "$WORK/snap.html"
echo "pickle: $(stat -c %s "$WORK/snap.pickle") bytes, page: $(stat -c %s "$WORK/snap.html") bytes"
go test -c -o "$WORK/snapshot.test" ./internal/snapshot
i=0
while [ "$i" -lt "$RUNS" ]; do
	TORCHMEM_BENCH_HTML="$WORK/snap.html" "$WORK/snapshot.test" -test.count=1 -test.run TestHTMLLoadTime -test.v |
		grep -o 'page ready after [0-9.]* s.*'
	i=$((i + 1))
done | tee "$WORK/runs"
echo "median: $(grep -o 'after [0-9.]*' "$WORK/runs" | cut -d' ' -f2 | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }') s"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
