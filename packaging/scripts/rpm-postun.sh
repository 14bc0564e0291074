# %postun of the torchmem RPM: what `%systemd_postun_with_restart
# torchmem.service` does. $1 is how many torchmem packages remain: 0 after
# an erase, 1 or more after an upgrade, when a running agent is restarted
# on the new binary (try-restart leaves a stopped one stopped).
systemctl daemon-reload >/dev/null 2>&1 || :
if [ "$1" -ge 1 ] 2>/dev/null; then
	systemctl try-restart torchmem.service >/dev/null 2>&1 || :
fi
exit 0
