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
	TORCHMEM_TEST_PYTHON="$py" go test -run '^$' -bench '5000Lines' -benchtime 20x -count 3 ./internal/lint/ | grep Benchmark
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if CGO_ENABLED=0 go build -o "$tmp/torchmem" ./cmd/torchmem 2>/dev/null; then
	# Same 5,000-line file as the Go benchmark: the clean corpus, repeated.
	python3 - "$tmp/big.py" <<'PY'
import glob, sys
srcs = [open(p).read().split("\n") for p in sorted(glob.glob("internal/lint/testdata/clean/*.py"))]
out, n, i = [], 0, 0
while n < 5000:
    out.append("\n\nclass Copy%d:" % i)
    for l in srcs[i % len(srcs)]:
        if n >= 4999:
            break
        out.append("    " + l)
        n += 1
    out.append("    pass")
    n += 4
    i += 1
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
	echo "== binary: $(wc -l <"$tmp/big.py") lines"
	for py in "${pythons[@]}"; do
		start=$(date +%s%N)
		for _ in $(seq 20); do "$tmp/torchmem" lint --no-host --python "$py" "$tmp/big.py" >/dev/null 2>&1 || true; done
		end=$(date +%s%N)
		echo "torchmem lint --python $py: $(( (end - start) / 20000000 )) ms per run (mean of 20)"
	done
else
	echo "(torchmem binary does not build right now; Go benchmarks only)"
fi
