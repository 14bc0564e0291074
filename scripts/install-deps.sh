#!/usr/bin/env bash
# Installs what torchmem's demo and test suite use, on Debian/Ubuntu:
# Debian's PyTorch (CPU) and torchvision for /usr/bin/python3, smem (PSS cross-check),
# chromium (HTML page tests), prometheus/promtool (metrics tests), rpm
# (package file list, scratch-root install), rpmlint + cpio (RPM lint), numactl,
# binutils (readelf for the glibc check).
# Elsewhere it only says what is missing; the tests skip what they cannot run.
set -euo pipefail

need=()
/usr/bin/python3 -c 'import torch' 2>/dev/null || need+=(python3-torch)
/usr/bin/python3 -c 'import torchvision' 2>/dev/null || need+=(python3-torchvision)
for pair in smem:smem chromium:chromium promtool:prometheus rpm:rpm rpmlint:rpmlint cpio:cpio numactl:numactl readelf:binutils; do
	command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair##*:}")
done
[ ${#need[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: not a Debian/Ubuntu host; missing: ${need[*]} (tests that need them will skip)" >&2
	exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${need[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
