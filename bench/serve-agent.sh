#!/bin/sh
# Agent cost of `torchmem serve`: RSS and CPU of the real binary sampling a
# node of 8 GPUs and a 200-process PyTorch job (fixture tree of real captured
# /proc files, fake GPU backend) every second, scraped by curl once a second.
#
#   bench/serve-agent.sh [SECONDS]       # default 60
#   ROOT=real bench/serve-agent.sh       # this host's /proc and /sys instead
#   ROOT=torch WORKERS=32 bench/serve-agent.sh   # real /proc with a real torch
#        job of 1+WORKERS processes (Debian's python3-torch); SERVE_ARGS adds
#        flags, e.g. SERVE_ARGS=--pss-period=10s
#
# Prints: RSS (VmRSS, VmHWM) at the end, CPU seconds used (utime+stime from
# /proc/PID/stat) and the share of one core over the measured window.
set -eu
secs=${1:-60}
port=${PORT:-19464}
tmp=$(mktemp -d)
job=
trap 'kill "$pid" $job 2>/dev/null || true; rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/torchmem" ./cmd/torchmem
go run ./bench/servefixture "$tmp/node"
if [ "${ROOT:-fixture}" = torch ]; then
	/usr/bin/python3 internal/cli/testdata/top/train_dataloader.py "${WORKERS:-32}" 0 >"$tmp/job" 2>&1 &
	job=$!
	until grep -q ready "$tmp/job"; do sleep 1; done
fi
if [ "${ROOT:-fixture}" != fixture ]; then
	"$tmp/torchmem" serve --listen "127.0.0.1:$port" --interval 1s --db "$tmp/none.db" ${SERVE_ARGS:-} 2>"$tmp/log" &
else
	TORCHMEM_PROC_ROOT="$tmp/node/proc" TORCHMEM_SYS_ROOT="$tmp/node/sys" \
		"$tmp/torchmem" serve --listen "127.0.0.1:$port" --interval 1s --db "$tmp/none.db" \
		--gpu-fake "$tmp/node/gpus.json" ${SERVE_ARGS:-} 2>"$tmp/log" &
fi
pid=$!
sleep 5 # first samples, PSS tier of every process
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
t0=$(ticks)
i=0
while [ "$i" -lt "$secs" ]; do
	curl -fsS "http://127.0.0.1:$port/metrics" >"$tmp/metrics"
	i=$((i + 1))
	sleep 1
done
t1=$(ticks)
series=$(grep -c '^torchmem_' "$tmp/metrics")
grep -E '^(VmRSS|VmHWM)' "/proc/$pid/status"
echo "torchmem series per scrape: $series"
awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s="$secs" 'BEGIN { c = (b - a) / hz; printf "CPU: %.2f s over %d s = %.2f%% of one core\n", c, s, 100 * c / s }'
