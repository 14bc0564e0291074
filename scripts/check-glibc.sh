#!/usr/bin/env bash
# check-glibc.sh [BINARY] — prove a torchmem binary runs on glibc 2.17
# (CentOS 7) and later: it must need no versioned glibc symbol newer than
# GLIBC_MAX (default 2.17).
#
# Without BINARY, builds ./cmd/torchmem with CGO_ENABLED=0 first.
#
# What it checks, with readelf (binutils):
#   - a static binary (no PT_INTERP, no DT_NEEDED) needs no glibc at all: OK;
#   - every GLIBC_x.y version the binary requires (readelf -V, the
#     .gnu.version_r section, and the sym@GLIBC_x.y names of readelf
#     --dyn-syms) is <= GLIBC_MAX;
#   - every DT_NEEDED library exists on glibc 2.17 (libc, libdl, libpthread…);
#   - unversioned imports (what Go's linker emits for purego's dlopen
#     without cgo) are on a list of functions glibc has exported since 2.2.5,
#     so the dynamic linker finds them on any supported host.
# Exit status: 0 OK, 1 a requirement is too new, 2 usage or tool missing.
set -euo pipefail

MAX=${GLIBC_MAX:-2.17}
cd "$(dirname "$0")/.."

if ! command -v readelf >/dev/null; then
	echo "check-glibc: readelf not found (install binutils)" >&2
	exit 2
fi

bin=${1:-}
if [[ -z $bin ]]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	bin=$tmp/torchmem
	echo "building ./cmd/torchmem with CGO_ENABLED=0"
	CGO_ENABLED=0 go build -trimpath -o "$bin" ./cmd/torchmem
fi
[[ -f $bin ]] || { echo "check-glibc: $bin: no such file" >&2; exit 2; }

if command -v file >/dev/null; then
	file -b "$bin" | cut -d, -f1-4
fi

needed=$(readelf -d -W "$bin" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
interp=$(readelf -l -W "$bin" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
if [[ -z $needed && -z $interp ]]; then
	echo "OK: $bin is statically linked: it needs no glibc symbol at all (any glibc, or none, will do)"
	exit 0
fi
echo "interpreter: ${interp:-none}"
echo "needs: $(echo $needed)"

fail=0
# Libraries a glibc 2.17 system has (plus the ld.so names).
for lib in $needed; do
	case $lib in
	libc.so.6 | libdl.so.2 | libpthread.so.0 | libm.so.6 | librt.so.1 | ld-linux-*.so.* | linux-vdso.so.1) ;;
	*) echo "FAIL: needs $lib, not part of glibc"; fail=1 ;;
	esac
done

versions=$( { readelf -V -W "$bin" 2>/dev/null; readelf --dyn-syms -W "$bin" 2>/dev/null; } |
	grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV || true)
if [[ -n $versions ]]; then
	highest=$(echo "$versions" | tail -n1)
	echo "versioned glibc requirements: $(echo $versions | sed 's/\([0-9.]*\)/GLIBC_\1/g')"
	for v in $versions; do
		if [[ $(printf '%s\n%s\n' "$v" "$MAX" | sort -V | tail -n1) != "$MAX" ]]; then
			echo "FAIL: needs GLIBC_$v (newer than $MAX), for:"
			readelf --dyn-syms -W "$bin" | grep "@GLIBC_$v\b" | awk '{print "  " $8}'
			fail=1
		fi
	done
else
	highest=none
	echo "versioned glibc requirements: none (no .gnu.version_r section)"
fi

# Unversioned imports bind to the library's default version; these have
# existed since glibc 2.2.5 (x86-64's baseline) / 2.17 (aarch64's).
known=" malloc free setenv unsetenv sigfillset nanosleep abort dlopen dlsym dlerror dlclose
 pthread_attr_init pthread_attr_destroy pthread_attr_getstacksize pthread_attr_setstacksize
 pthread_create pthread_detach pthread_sigmask pthread_mutex_lock pthread_mutex_unlock
 pthread_cond_broadcast pthread_setspecific pthread_self pthread_key_create mmap munmap "
# Weak ones (__gmon_start__) may be absent without harm.
known=" $(echo $known) "
unversioned=$(readelf --dyn-syms -W "$bin" | awk '$7 == "UND" && $5 != "WEAK" && $8 != "" && $8 !~ /@/ {print $8}')
for sym in $unversioned; do
	if [[ $known != *" $sym "* ]]; then
		echo "FAIL: unversioned import $sym is not on the list known to exist in glibc $MAX"
		fail=1
	fi
done
echo "unversioned imports: $(echo $unversioned | wc -w) ($(echo $unversioned | tr '\n' ' '))"

if ((fail)); then
	echo "FAIL: $bin will not run on glibc $MAX"
	exit 1
fi
echo "OK: $bin needs no glibc symbol newer than GLIBC_$MAX (highest versioned: $highest)"
