#!/bin/sh
# Benchmarks of `torchmem snapshot` against CPython's pickle.load, side by
# side on the same files, and the 1 GB targets (summary < 10 s with peak RSS
# under the file size; html < 30 s; page ready in Chromium < 3 s).
#
#   bench/snapshot.sh [COMPARE_SIZE] [BIG_SIZE]      (defaults: 300M 1G)
#
# Env: TORCHMEM (binary; default: built from ./cmd/torchmem), PYTHON
# (default /usr/bin/python3), WORK (scratch dir; default a mktemp dir,
# removed at the end with the generated files).
set -eu
cd "$(dirname "$0")/.."
CMP_SIZE=${1:-300M}
BIG_SIZE=${2:-1G}
PYTHON=${PYTHON:-/usr/bin/python3}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
if [ -z "${TORCHMEM:-}" ]; then
	TORCHMEM=$WORK/torchmem
	CGO_ENABLED=0 go build -o "$TORCHMEM" ./cmd/torchmem
fi
SRC=internal/snapshot/testdata/real/train_gpt2_bf16.pickle.gz
T="/usr/bin/time -f %e_s_wall_%U_s_user_%S_s_sys_%M_KB_peak_RSS"

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
gunzip -c "$SRC" > "$WORK/train.pickle"
go run ./bench/snapshotgen -in "$SRC" -size "$CMP_SIZE" -o "$WORK/cmp.pickle"
for f in "$WORK/train.pickle" "$WORK/cmp.pickle"; do
	echo "== $(basename "$f"): $(stat -c %s "$f") bytes"
	for i in 1 2 3; do
		printf 'torchmem snapshot summary  '; $T "$TORCHMEM" snapshot summary "$f" 2>&1 >/dev/null
		printf 'python3 pickle.load        '; $T "$PYTHON" -c 'import pickle,sys; pickle.load(open(sys.argv[1],"rb"))' "$f" 2>&1
	done
done
rm -f "$WORK/cmp.pickle"

go run ./bench/snapshotgen -in "$SRC" -size "$BIG_SIZE" -o "$WORK/big.pickle"
echo "== big.pickle: $(stat -c %s "$WORK/big.pickle") bytes"
printf 'torchmem snapshot summary  '; $T "$TORCHMEM" snapshot summary "$WORK/big.pickle" 2>&1 >/dev/null
printf 'torchmem snapshot html     '; $T "$TORCHMEM" snapshot html "$WORK/big.pickle" -o "$WORK/big.html" 2>&1 >/dev/null
echo "page: $(stat -c %s "$WORK/big.html") bytes"
rm -f "$WORK/big.pickle"
TORCHMEM_BENCH_HTML="$WORK/big.html" go test -count=1 -run TestHTMLLoadTime -v ./internal/snapshot | grep 'page ready'
