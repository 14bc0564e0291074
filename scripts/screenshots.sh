#!/usr/bin/env bash
# Screenshots for docs/screenshots/: the HTML report and each dashboard page
# (node, runs, run, cluster), in English and Chinese, taken by a real
# headless Chromium through chromedp (internal/web TestScreenshots) from a
# real `torchmem serve` over real runs of the leak demo: a warning, a policy
# stop before the OOM killer, and the leak verdict.
# Needs root (run's cgroup), chromium (Debian: chromium), a CJK font
# (Debian: fonts-wqy-microhei or fonts-noto-cjk) and python3 with torch.
# Usage: scripts/screenshots.sh [python3] ; MEMORY_MAX (default 2G)
# sets the demo's --memory-max: at 600M a loaded host's start-up ramp
# (torch import, DataLoader workers) already projects the limit within 20 s
# and the policy stops the job before it warns or shows a leak.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
py=${1:-python3}
mem=${MEMORY_MAX:-2G}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
bin=$work/torchmem
go build -o "$bin" ./cmd/torchmem
db=$work/torchmem.db
out=$repo/docs/screenshots
mkdir -p "$out"

demo() { # demo LANG: one recorded leak-demo run, its post-mortem in LANG
	"$bin" run --lang "$1" --db "$db" --memory-max "$mem" --policy examples/leak-policy.yaml \
		-- "$py" examples/train.py --epochs 30 --grow-mb 8 >"$work/run-$1.out" 2>"$work/run-$1.err" || true
}
lastrun() { "$bin" runs --db "$db" --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])'; }

echo "recording the English run..."
demo en
run_en=$(lastrun)
port=$((20000 + RANDOM % 20000))
"$bin" serve --db "$db" --listen "127.0.0.1:$port" --no-kernel-log >"$work/serve.log" 2>&1 &
pids+=($!)
echo "recording the Chinese run; the node page is taken while it runs..."
demo zh &
demo_pid=$!
sleep 25
export TORCHMEM_SCREENSHOTS=$out TORCHMEM_SCREENSHOT_URL=http://127.0.0.1:$port
TORCHMEM_SCREENSHOT_PAGES=node go test ./internal/web -run '^TestScreenshots$' -count=1 -v | grep -E 'KB|FAIL|^ok'
wait "$demo_pid"
run_zh=$(lastrun)
"$bin" report "$run_en" --db "$db" --lang en -o "$work/report-en.html"
"$bin" report "$run_zh" --db "$db" --lang zh -o "$work/report-zh.html"
TORCHMEM_SCREENSHOT_PAGES=runs,run,report,cluster TORCHMEM_SCREENSHOT_RUN_EN=$run_en TORCHMEM_SCREENSHOT_RUN_ZH=$run_zh \
	TORCHMEM_SCREENSHOT_REPORT_EN=$work/report-en.html TORCHMEM_SCREENSHOT_REPORT_ZH=$work/report-zh.html \
	go test ./internal/web -run '^TestScreenshots$' -count=1 -v | grep -E 'KB|FAIL|^ok'
ls -l "$out"
