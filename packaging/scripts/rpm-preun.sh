# %preun of the torchmem RPM: what `%systemd_preun torchmem.service` does.
# $1 is how many torchmem packages remain once this one is gone: 0 on
# erase, 1 when an upgrade removes the old version (then nothing is done:
# %postun restarts the agent on the new binary).
if [ "$1" -eq 0 ] 2>/dev/null; then
	systemctl --no-reload disable torchmem.service >/dev/null 2>&1 || :
	systemctl stop torchmem.service >/dev/null 2>&1 || :
	# tuned: the packaged profile is about to disappear. If it is the active
	# one (tuned-adm profile torchmem-training), go back to tuned's
	# recommendation rather than leave tuned failing to load it at boot. A
	# profile `torchmem tune apply` wrote lives in /etc/tuned and stays.
	active=
	[ -r /etc/tuned/active_profile ] && read -r active </etc/tuned/active_profile
	case "$active" in
	torchmem-training | torchmem-inference)
		if [ ! -e "/etc/tuned/$active/tuned.conf" ] && command -v tuned-adm >/dev/null 2>&1; then
			tuned-adm profile "$(tuned-adm recommend 2>/dev/null || echo balanced)" >/dev/null 2>&1 || :
		fi
		;;
	esac
fi
exit 0
