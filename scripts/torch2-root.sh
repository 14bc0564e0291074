#!/usr/bin/env bash
# torch2-root.sh DIR: a Debian 13 (trixie) root in DIR with python3-torch 2.6
# (CPU), and DIR/host-python3, which runs trixie's python3 on this host.
#
# Why: CI and development machines are Debian 12, whose python3-torch is
# 1.13; the tracer of `torchmem estimate --trace` must also be tested on
# torch 2.x (internal/tracerun's torch-2 subtests look for
# .cache/torch2-root/host-python3). PyPI is not reachable, Debian is.
#
# DIR/host-python3 starts trixie's python3 through trixie's own dynamic
# loader (its glibc is newer than the host's, so the host's loader cannot run
# it) with the root's library directories, and no chroot: the program sees
# the host's files (its cwd, the temp dir the tracer's hook is installed in)
# and the environment passes through. sys.executable is the wrapper, so a
# subprocess or a spawned DataLoader worker of sys.executable runs the same
# way. Absolute symlinks in the root (Debian's alternatives for BLAS/LAPACK,
# /etc links) are made relative, so they resolve inside DIR, not on the host.
#
# Idempotent: a root whose wrapper imports torch is left as it is; a root a
# failed debootstrap left half-made (DIR/debootstrap exists) is made again.
# Needs root (debootstrap), network to a Debian mirror, ~2 GB of disk.
set -euo pipefail

dir=${1:?usage: torch2-root.sh DIR}
mirror=${TORCH2_ROOT_MIRROR:-http://deb.debian.org/debian}
# TORCH2_ROOT_SUITE=sid: Debian unstable's newer torch (2.14 in 2026-12) in the same way.
suite=${TORCH2_ROOT_SUITE:-trixie}
packages=python3-torch,python3-torchvision,python3-numpy,python3-yaml,python3-regex,python3-requests,python3-tqdm,python3-filelock,python3-packaging,python3-safetensors,python3-fsspec,ca-certificates

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
wrapper=$dir/host-python3

if [ -x "$wrapper" ] && "$wrapper" -c 'import torch, torchvision' 2>/dev/null; then
	echo "torch2-root: $dir is ready ($("$wrapper" -c 'import torch; print("torch", torch.__version__)'))"
	exit 0
fi

if [ -d "$dir/debootstrap" ]; then
	echo "torch2-root: $dir was left half-made by debootstrap; making it again" >&2
	for m in proc sys dev/pts dev; do
		umount "$dir/$m" 2>/dev/null || true
	done
	rm -rf --one-file-system "$dir"
	mkdir -p "$dir"
fi

if [ ! -x "$dir/usr/bin/python3" ]; then
	export DEBIAN_FRONTEND=noninteractive
	command -v debootstrap >/dev/null || {
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
	}
	start=$(date +%s)
	debootstrap --variant=minbase --include="$packages" "$suite" "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 || {
		tail -20 "$dir.debootstrap.log" >&2
		exit 1
	}
	# The downloaded .debs are not needed to run it.
	rm -f "$dir"/var/cache/apt/archives/*.deb
	echo "torch2-root: debootstrap took $(($(date +%s) - start)) s"
fi

# Absolute symlinks -> relative ones inside the root.
find "$dir/usr" "$dir/etc" -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
	target=$(readlink "$link")
	case "$target" in /proc/* | /dev/* | /sys/*) continue ;; esac
	ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$dir$target")" "$link"
done

py=$(cd "$dir/usr/bin" && ls python3.[0-9]* | grep -E '^python3\.[0-9]+$' | sort -V | tail -1)
loader=$dir/lib64/ld-linux-x86-64.so.2
libs=$dir/usr/lib/x86_64-linux-gnu
[ -e "$loader" ] && [ -n "$py" ] || {
	echo "torch2-root: $dir has no $loader or python3.N" >&2
	exit 1
}
cat >"$wrapper.tmp" <<EOF
#!/bin/sh
# Made by scripts/torch2-root.sh: $suite's $py run on this host by $suite's
# dynamic loader (no chroot; host paths and the environment are seen).
exec "$loader" --argv0 "$wrapper" \\
	--library-path "$libs/openblas-pthread:$libs/blas:$libs/lapack:$libs:$dir/usr/lib" \\
	"$dir/usr/bin/$py" "\$@"
EOF
chmod 755 "$wrapper.tmp"
mv "$wrapper.tmp" "$wrapper"

"$wrapper" -c 'import sys, torch, torchvision; print("torch2-root: torch", torch.__version__, "torchvision", torchvision.__version__, "python", sys.version.split()[0])'
du -sh --one-file-system "$dir" | sed 's/^/torch2-root: size /'
