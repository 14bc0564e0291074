#!/bin/sh
# postrm of the torchmem DEB: forget the removed unit. The run history in
# /var/lib/torchmem is kept even on purge (rm -rf /var/lib/torchmem drops it).
set -e
case "$1" in
remove | purge)
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload >/dev/null 2>&1 || true
	fi
	;;
esac
exit 0
