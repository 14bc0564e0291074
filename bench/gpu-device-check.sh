#!/usr/bin/env bash
# gpu-device-check.sh — the GPU checks that need an NVIDIA host, as one short
# script (about a minute): NVML against nvidia-smi, the real NVML query
# latency, and `torchmem doctor` / the GPU source on the host. Writes its
# outputs under ${OUT:-./gpu-device-check}.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-./gpu-device-check}
mkdir -p "$out"
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,memory.total,memory.used,memory.free,memory.reserved,driver_version,persistence_mode,ecc.mode.current,compute_mode --format=csv >"$out/nvidia-smi-query-gpu.csv" 2>&1
CGO_ENABLED=0 go test -count=1 -run 'NVMLRealHost|OpenRealHost' -v ./internal/gpu/ >"$out/nvml-test.txt" 2>&1
CGO_ENABLED=0 go test -run '^$' -bench NVMLReal -benchtime 20000x ./internal/gpu/ >"$out/nvml-bench.txt" 2>&1
CGO_ENABLED=0 go build -o "$out/torchmem" ./cmd/torchmem
"$out/torchmem" doctor --no-python >"$out/doctor.txt" 2>&1
echo "doctor exit $?" >>"$out/doctor.txt"
"$out/torchmem" doctor --no-python --json >"$out/doctor.json" 2>&1
scripts/check-glibc.sh "$out/torchmem" >"$out/check-glibc.txt" 2>&1
rm -f "$out/torchmem"
tail -n 3 "$out"/*.txt
