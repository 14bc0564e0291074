#!/bin/sh
# postinst of the torchmem DEB: "configure" on install and upgrade ($2 is
# the version being upgraded from, empty on a first install). The agent is
# not enabled here (systemctl enable --now torchmem), as on EL.
set -e
if [ "$1" = configure ] && [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	if [ -n "$2" ]; then
		systemctl try-restart torchmem.service >/dev/null 2>&1 || true
	fi
fi
exit 0
