#!/usr/bin/env bash
# gpu-bench.sh — the GPU source's benchmarks: nvidia-smi CSV and XML parsing
# (recorded H200 output) and the NVML binding's own overhead against the C
# stand-in library (needs cc). Real NVML timings need a GPU host: there,
# run `torchmem top --once` under `perf stat` or the sample benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
CGO_ENABLED=0 go test -run '^$' -bench 'SMI|NVML' -benchtime "${BENCHTIME:-20000x}" ./internal/gpu/
