#!/usr/bin/env bash
# Benchmark `torchmem lint` on a 5,000-line training script, Python start
# included. Usage: bench/lint_bench.sh [python ...]   (default: python3)
# Prints Go benchmark lines (end to end, and the Go rules alone) per
# interpreter, then wall times of the real binary when it builds.
set -euo pipefail
cd "$(dirname "$0")/.."
pythons=("$@")
[ ${#pythons[@]} -eq 0 ] && pythons=(python3)
for py in "${pythons[@]}"; do
	echo "== $py ($("$py" -c 'import sys; print(sys.version.split()[0])'))"
	[ -n "${SKIP_GO_BENCH:-}" ] || TORCHMEM_TEST_PYTHON="$py" go test -run '^$' -bench '5000Lines' -benchtime 10x -count 3 ./internal/lint/ | grep Benchmark
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if CGO_ENABLED=0 go build -o "$tmp/torchmem" ./cmd/torchmem 2>/dev/null; then
	# Same file as the Go benchmark: whole clean-corpus files, repeated to >= 5,000 lines.
	python3 - "$tmp/big.py" <<'PY'
import glob, sys
srcs = [open(p).read().split("\n") for p in sorted(glob.glob("internal/lint/testdata/clean/*.py"))]
out, n, i = [], 0, 0
while n < 5000:  # whole files only, so the result stays valid Python
    out.append("\n\nclass Copy%d:" % i)
    out.extend("    " + l for l in srcs[i % len(srcs)])
    n += len(srcs[i % len(srcs)])
    out.append("    pass")
    n += 4
    i += 1
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
	echo "== binary: $(wc -l <"$tmp/big.py") lines"
	# Wall time, and CPU time (user+sys of torchmem and its Python child):
	# on a machine shared with other jobs the wall time mostly measures the
	# queue for a core; the pipeline is sequential, so on an idle machine
	# wall time is about the CPU time.
	for py in "${pythons[@]}"; do
		for _ in $(seq 20); do
			/usr/bin/time -f "%e %U %S" -a -o "$tmp/times" \
				"$tmp/torchmem" lint --no-host --python "$py" "$tmp/big.py" >/dev/null 2>&1 || true
		done
		awk -v py="$py" 'NF == 3 {w += $1; c += $2 + $3; n++} END {printf "torchmem lint --python %s: wall %.0f ms, cpu %.0f ms (mean of %d)\n", py, 1000*w/n, 1000*c/n, n}' "$tmp/times"
		rm -f "$tmp/times"
	done
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
else
	echo "(torchmem binary does not build right now; Go benchmarks only)"
fi
