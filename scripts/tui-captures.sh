#!/usr/bin/env bash
# Captures of the live views for docs/tui/: `torchmem top` and
# `torchmem run --tui` over a real DataLoader job (scripts/tui-demo), at
# 80x24 and 200x50, in English and Chinese, driven by tmux send-keys.
# Needs tmux, python3 with torch (Debian: python3-torch) and root for
# run's cgroup. Usage: scripts/tui-captures.sh [torchmem binary] [python3]
# [top|run|all] (the third: which view's captures to remake; all when
# absent).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bin=${1:-}
py=${2:-python3}
views=${3:-all}
work=$(mktemp -d)
export TMUX_TMPDIR=$work
if [ -z "$bin" ]; then
	bin=$work/torchmem
	go build -o "$bin" ./cmd/torchmem
fi
cp scripts/tui-demo/dataloader_demo.py "$work/"
out=$repo/docs/tui
mkdir -p "$out"
jobs=()
cleanup() {
	tmux kill-server 2>/dev/null || true
	for p in "${jobs[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

# neutral replaces the capturing machine's own cgroup (the parent of the
# job's, from /proc/self/cgroup) with a typical systemd session scope, so
# the captures in docs/ name no path of the machine that made them.
own_cgroup=$(awk -F: '$2 ~ /memory/ || $2 == "" {print $3; exit}' /proc/self/cgroup)
neutral() {
	if [ -n "$own_cgroup" ] && [ "$own_cgroup" != "/" ]; then
		sed "s#$own_cgroup#/user.slice/user-1000.slice/session-2.scope#g"
	else
		cat
	fi
}

# shot FILE KEYS...: send the keys (one send-keys each), wait for the
# next frame, append the screen to FILE under the keys sent.
shot() {
	local file=$1
	shift
	# A pause after each key: Escape and a letter sent together read as
	# Alt+letter.
	for k in "$@"; do
		tmux send-keys -t cap "$k" || true
		sleep 0.4
	done
	sleep 1.2
	{
		echo "── keys: ${*:-(none)} ──"
		tmux capture-pane -p -t cap || echo "(the session has ended)"
	} | neutral >>"$file"
}

# session W H LANG CMD: a tmux session of W x H running CMD in $work.
session() {
	tmux -u new-session -d -s cap -x "$1" -y "$2" -c "$work" "env LANG=$3 LC_ALL=$3 $4"
}

if [ "$views" != run ]; then
# The job top watches, started from $work so its command line is short.
(cd "$work" && exec "$py" dataloader_demo.py >/dev/null 2>&1) &
jobs+=($!)
sleep 8 # torch imports, workers start, the first batches go through /dev/shm

for size in 80x24 200x50; do
	w=${size%x*} h=${size#*x}
	for lang in en zh; do
		locale=C.UTF-8
		[ "$lang" = zh ] && locale=zh_CN.UTF-8
		f=$out/top-$size-$lang.txt
		echo "# torchmem top --filter dataloader_demo.py at $size, LANG=$locale; keys sent with tmux send-keys (scripts/tui-captures.sh)" >"$f"
		session "$w" "$h" "$locale" "$bin top --filter dataloader_demo.py"
		sleep 6 # CPU% needs two samples; the RSS history a few
		shot "$f"
		shot "$f" "?"
		shot "$f" Escape s
		shot "$f" r
		shot "$f" r e
		shot "$f" j j
		shot "$f" x
		shot "$f" k
		shot "$f" n
		shot "$f" Escape
		tmux send-keys -t cap q || true
		sleep 0.5
		tmux kill-session -t cap 2>/dev/null || true
	done
done
for p in "${jobs[@]}"; do kill "$p" 2>/dev/null || true; done
jobs=()
fi

[ "$views" = top ] && { echo "captures in docs/tui/"; exit 0; }
for size in 80x24 200x50; do
	w=${size%x*} h=${size#*x}
	for lang in en zh; do
		locale=C.UTF-8
		[ "$lang" = zh ] && locale=zh_CN.UTF-8
		f=$out/run-$size-$lang.txt
		echo "# torchmem run --tui --memory-max 2G -- python3 dataloader_demo.py at $size, LANG=$locale; keys sent with tmux send-keys (scripts/tui-captures.sh)" >"$f"
		session "$w" "$h" "$locale" "$bin run --tui --memory-max 2G -- $py dataloader_demo.py; sleep 30"
		sleep 12
		shot "$f"
		shot "$f" "?"
		shot "$f" Escape e
		shot "$f" j j
		shot "$f" x
		shot "$f" k
		shot "$f" n
		shot "$f" Escape
		shot "$f" q
		tmux send-keys -t cap C-c || true
		sleep 3
		tmux send-keys -t cap C-c || true
		sleep 2
		tmux kill-session -t cap 2>/dev/null || true
		rm -f "$work"/torchmem-*.log
	done
done
echo "captures in docs/tui/"
