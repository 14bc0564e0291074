# %post of the torchmem RPM: what `%systemd_post torchmem.service` does on
# EL 7, 8 and 9. $1 is how many torchmem packages are installed once this
# one is: 1 on a first install, 2 during an upgrade.
if [ "$1" -eq 1 ] 2>/dev/null; then
	# First install: enabled or not as the host's presets say (EL presets
	# leave third-party services disabled: systemctl enable --now torchmem).
	systemctl --no-reload preset torchmem.service >/dev/null 2>&1 || :
fi
# EL 8/9 reload systemd through its file triggers; EL 7 has none.
systemctl daemon-reload >/dev/null 2>&1 || :
exit 0
