#!/usr/bin/env bash
# device-check.sh — the checks of `torchmem run` (and friends) that need a
# real NVIDIA GPU, as ONE prepared script for a session lent a GPU host
# (H200, torch 2.11 + CUDA 13, cgroup v2, root, no network, no Go).
# Finishes in about 3 minutes (every step has its own timeout; the whole
# must stay under 5). Everything goes to "$OUT/"; $OUT/summary.txt says
# PASS/FAILED per step with the key numbers.
#
# How to run it (from a session that has the device tool):
#   1. here, at the repository root, build what the script carries:
#        CGO_ENABLED=0 go build -trimpath -o torchmem ./cmd/torchmem
#        CGO_ENABLED=0 go test -c -o gpu.test ./internal/gpu
#      (both are git-ignored, so they must be carried explicitly)
#   2. device tool:  run(command="bash bench/device-check.sh",
#                        carry=["torchmem", "gpu.test"], timeout_s=420)
#   3. read $OUT/summary.txt first (files_at/summary.txt), then the step
#      outputs it names; record the numbers in bench/results/run.md.
# Locally (any GPU host): OUT=/tmp/dc bash bench/device-check.sh
# The step-time overhead of `torchmem run` (the <= 1% goal) is a second
# run of about 4 minutes (10 interleaved rounds of bare, run, and run
# --record-history):
#   run(command="bash bench/device/overhead.sh", carry=["torchmem"], timeout_s=420)
# The estimator's own check is a third (about 2 minutes):
#   run(command="python3 bench/device/estimate_measure.py $OUT/measured.jsonl",
#       timeout_s=420), then here: go run ./bench/estimate FILES_AT/measured.jsonl
#
# Steps: version; glibc; top --once/--json; doctor (+--json); a ~20 s CUDA
# training loop (bench/device/cuda_train.py) under `torchmem run
# --gpu-threshold 50% --record-history 100000 --memory-max 8G` with
# `top --json` taken while it runs (NVML backend, devices, the job's
# processes); runs/show/report --json/--html; a real CUDA OOM under
# `torchmem run` (post-mortem must say cuda-oom; its OOM snapshot read by
# `torchmem snapshot summary`); the hook's measured per-step peaks in the
# run's step rows; the --gpu-threshold cleanup (bytes freed, seconds from
# crossing to ack); per-process GPU memory of top --json vs nvidia-smi
# with DataLoader workers and a second process on the GPU, and serve's
# /metrics; estimate --gpu auto. What each check proves and the expected
# results: bench/device/EXPECTED.md.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-./device-check-out}
mkdir -p "$OUT"
TM=${TM:-./torchmem}
WORK=$(mktemp -d /tmp/torchmem-dc.XXXXXX)
DB=$WORK/h.db
SUM=$OUT/summary.txt
: >"$SUM"
T0=$(date +%s)

note() { echo "$*" | tee -a "$SUM"; }
# step NAME TIMEOUT CMD...: runs CMD with its output in $OUT/NAME.txt;
# a failure is noted and the script goes on.
step() {
	local name=$1 limit=$2 s=$(date +%s) rc
	shift 2
	timeout -k 5 "$limit" "$@" >"$OUT/$name.txt" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		note "PASS   $name ($(($(date +%s) - s)) s)"
	else
		note "FAILED $name (exit $rc, $(($(date +%s) - s)) s; see $name.txt)"
	fi
	return $rc
}

PY=${PY:-}
for p in python3 /usr/bin/python3 /usr/local/bin/python3 python; do
	[ -n "$PY" ] && break
	if command -v "$p" >/dev/null && "$p" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
		PY=$(command -v "$p")
	fi
done
note "host: $(hostname) $(uname -r); python: ${PY:-none with CUDA torch}; $(date -u +%FT%TZ)"
[ -n "$PY" ] && "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' 2>&1 | tee -a "$SUM"
nvidia-smi --query-gpu=index,name,memory.total,memory.used,driver_version --format=csv >"$OUT/nvidia-smi.csv" 2>&1 || echo "FAILED nvidia-smi" >>"$SUM"
stat -fc 'cgroup fs: %T' /sys/fs/cgroup >>"$SUM" 2>&1

# 1. The binary itself.
step version 10 "$TM" --version || echo FAILED version
if [ -x scripts/check-glibc.sh ] && command -v readelf >/dev/null; then
	step glibc 30 bash scripts/check-glibc.sh "$TM" || echo FAILED glibc
else
	step glibc 10 sh -c "file '$TM' 2>/dev/null; ! grep -q 'ld-linux' '$TM' && echo 'static: no ELF interpreter'" || echo FAILED glibc
fi

# 1b. The NVML binding against the real driver, when the session carried
# the gpu package's test binary (built here: CGO_ENABLED=0 go test -c -o
# gpu.test ./internal/gpu): NVML figures vs nvidia-smi, and the cost of one
# processes + memory query pair (~22 us expected).
if [ -x ./gpu.test ]; then
	step nvml-test 60 ./gpu.test -test.run 'NVMLRealHost|OpenRealHost' -test.v || echo FAILED nvml-test
	step nvml-bench 60 ./gpu.test -test.run '^$' -test.bench NVMLReal -test.benchtime 20000x || echo FAILED nvml-bench
else
	note "SKIP   nvml-test (gpu.test not carried)"
fi

# 2. top and doctor on the idle GPU host.
step top-once 30 "$TM" top --once --width 120 || echo FAILED top-once
step top-json 30 "$TM" top --json || echo FAILED top-json
# doctor exits 0/1/2 by the worst finding's severity: all three mean it ran.
step doctor 60 sh -c '"$0" doctor; c=$?; echo "doctor exit $c"; [ $c -le 2 ]' "$TM" || echo FAILED doctor
step doctor-json 60 sh -c '"$0" doctor --json; [ $? -le 2 ]' "$TM" || echo FAILED doctor-json
if [ -z "$PY" ]; then
	note "FAILED no python with CUDA torch: the CUDA steps are skipped"
	exit 0
fi

# 3. The CUDA loop under torchmem run, with 2 DataLoader workers and a
# transient 80 GiB tensor freed into the cache at step 50 (so GPU used
# crosses --gpu-threshold 50% on a 141 GiB H200 and the cleanup has
# something to free); a second, unrelated process holds 2 GiB on the same
# GPU; `torchmem serve` samples the node. At 15 s, top --json, nvidia-smi's
# per-process table and /metrics are taken back to back and compared by
# bench/device/check_gpu_run.py.
PORT=${PORT:-19464}
"$TM" serve --listen 127.0.0.1:$PORT --db "$DB" --no-kernel-log >"$OUT/serve.log" 2>&1 &
SERVEPID=$!
"$PY" bench/device/cuda_train.py --hold-gib 2 --seconds 45 >"$OUT/holder.stdout" 2>&1 &
HOLDPID=$!
"$TM" run --db "$DB" --gpu-threshold 50% --record-history 100000 --memory-max 16G \
	-- "$PY" bench/device/cuda_train.py --seconds 25 --workers 2 --spike-gib 80 >"$OUT/run-cuda.stdout" 2>"$OUT/run-cuda.stderr" &
RUNPID=$!
sleep 15
"$TM" top --json >"$OUT/top-json-during-run.txt" 2>"$OUT/top-json-during-run.err"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits >"$OUT/smi-apps.csv" 2>&1
curl -s --max-time 10 http://127.0.0.1:$PORT/metrics >"$OUT/metrics-during-run.txt" 2>&1 ||
	python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$PORT/metrics', timeout=10).read().decode())" >"$OUT/metrics-during-run.txt" 2>&1
step top-once-during-run 30 "$TM" top --once --width 200 || echo FAILED top-once-during-run
step compare-top-smi 30 "$PY" bench/device/check_gpu_run.py top "$OUT/top-json-during-run.txt" "$OUT/smi-apps.csv" "$OUT/metrics-during-run.txt" "$HOLDPID" || echo FAILED compare-top-smi
sed 's/^/  /' "$OUT/compare-top-smi.txt" >>"$SUM"
s=$(date +%s)
if timeout 90 tail --pid=$RUNPID -f /dev/null && wait $RUNPID; then
	note "PASS   run-cuda ($(($(date +%s) - s + 15)) s)"
else
	note "FAILED run-cuda (see run-cuda.stdout/.stderr)"
fi
kill $HOLDPID $SERVEPID 2>/dev/null
wait $HOLDPID $SERVEPID 2>/dev/null
"$PY" - "$OUT/top-json-during-run.txt" >>"$SUM" 2>&1 <<'PYEOF' || note "FAILED top-json-during-run: not parsed"
import json, sys
d = json.load(open(sys.argv[1]))
g = d.get("gpu", {})
info = g.get("info", {})
print("  top --json during the run: backend %s, %d device(s), %d GPU process(es), %d job(s)" % (
    info.get("backend"), len(g.get("devices") or []), len(g.get("processes") or []), len(d.get("jobs") or [])))
for j in d.get("jobs") or []:
    t = j.get("totals", {})
    print("    job %s: %d processes, gpu %.1f MiB, rss %.1f MiB" % (j.get("id"), t.get("processes", 0),
          t.get("gpu_bytes", 0) / 2**20, t.get("rss_bytes", 0) / 2**20))
PYEOF
grep -E "^(done|peak|median)" "$OUT/run-cuda.stdout" | sed 's/^/  /' >>"$SUM"
grep -E "^torchmem: run |peaks:|optimizer steps" "$OUT/run-cuda.stderr" | sed 's/^/  /' >>"$SUM"

# 4. History of that run.
step runs 20 "$TM" runs --db "$DB" || echo FAILED runs
step show 20 "$TM" show last --db "$DB" || echo FAILED show
step report-json 30 sh -c "'$TM' report last --db '$DB' --json > '$OUT/report.json'" || echo FAILED report-json
step report-html 30 "$TM" report last --db "$DB" --html "$OUT/report.html" || echo FAILED report-html
# 4a. The --gpu-threshold rule fired at the spike, the hook's cleanup
# freed the cache, and how long it took from the crossing to the ack.
step gpu-threshold 30 "$PY" bench/device/check_gpu_run.py threshold "$OUT/report.json" || echo FAILED gpu-threshold
sed 's/^/  /' "$OUT/gpu-threshold.txt" >>"$SUM"
# 4b. Per-step peaks measured by the hook (reset + max_memory_* at each
# optimizer step, issue 20): the CUDA loop's step rows must carry them.
if grep -Eq '"step_peak_allocated": *[1-9]' "$OUT/report.json"; then
	note "PASS   step-peaks-measured ($(grep -Eo '"step_peak_allocated": *[0-9]+' "$OUT/report.json" | wc -l) step rows with a measured peak)"
else
	note "FAILED step-peaks-measured (report.json has no step row with step_peak_allocated > 0)"
fi

# 5. A real CUDA OOM under torchmem run, with the OOM observer's snapshot.
s=$(date +%s)
timeout -k 5 90 "$TM" run --db "$DB" --record-history 100000 --memory-max 8G \
	-- "$PY" bench/device/cuda_train.py --oom >"$OUT/run-oom.stdout" 2>"$OUT/run-oom.stderr"
rc=$?
note "run-oom: exit $rc ($(($(date +%s) - s)) s; a CUDA OOM exits 1)"
"$TM" show last --db "$DB" --json >"$OUT/show-oom.json" 2>&1
if grep -q '"cause": *"cuda-oom"' "$OUT/show-oom.json"; then
	note "PASS   oom-classified (cause cuda-oom)"
else
	note "FAILED oom-classified (show-oom.json has no cause cuda-oom)"
fi
grep -E "^torchmem: run |memory snapshot|^  - " "$OUT/run-oom.stderr" | sed 's/^/  /' >>"$SUM"
SNAP=$(sed -n 's/^  memory snapshot at the OOM: \(.*\) (torchmem snapshot summary FILE)$/\1/p' "$OUT/run-oom.stderr" | head -1)
if [ -n "$SNAP" ] && [ -f "$SNAP" ]; then
	ls -l "$SNAP" >>"$SUM"
	[ "$(stat -c %s "$SNAP")" -lt 50000000 ] && cp "$SNAP" "$OUT/oom-snapshot.pickle"
	step snapshot-summary 60 "$TM" snapshot summary "$SNAP" || echo FAILED snapshot-summary
else
	note "FAILED snapshot-summary (no OOM snapshot named in run-oom.stderr)"
fi

# 6. estimate against the local GPU.
step estimate 60 "$TM" estimate --gpu auto --model gpt2 --batch 8 --seq 512 || echo FAILED estimate

# 7. Step-time overhead (>= 10 interleaved rounds per variant) is its own
# run, bench/device/overhead.sh, so that both fit one session's device time.

cp "$DB" "$OUT/h.db" 2>/dev/null
rm -rf "$WORK"
note "total $(($(date +%s) - T0)) s"
