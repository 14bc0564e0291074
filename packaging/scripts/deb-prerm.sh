#!/bin/sh
# prerm of the torchmem DEB: on "remove" stop and disable the agent while
# its unit file still exists; on "upgrade" leave it to postinst's restart.
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
	systemctl --no-reload disable torchmem.service >/dev/null 2>&1 || true
	systemctl stop torchmem.service >/dev/null 2>&1 || true
fi
exit 0
