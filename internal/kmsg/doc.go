// Package kmsg reads kernel log lines from every place a Linux host keeps
// them and normalises their timestamps.
//
// Sources read live (Open): /dev/kmsg (root; records "pri,seq,usec,flags;text"),
// `journalctl -k -o json`, and `dmesg`, tried in that order.
//
// Lines pasted or saved to files (ParseLine) may carry any of these
// prefixes, which are recognised and stripped:
//
//	6,1234,816907974,-;text                       /dev/kmsg record
//	[  816.907974] text                            dmesg (seconds since boot)
//	<6>[  816.907974] text                         dmesg -r
//	kern  :info  : [  816.907974] text            dmesg -x
//	[Sun Nov 29 22:31:42 2026] text                dmesg -T (any locale: "So", "dim.", "11月")
//	2026-11-29T22:31:42,123456+00:00 text          dmesg --time-format iso
//	Nov 29 22:31:42 host kernel: text              journalctl -k, /var/log/messages
//	Nov 29 22:31:42 host kernel: [  816.9] text    RHEL/CentOS 7 /var/log/messages
//	2026-11-29T22:31:42.123456+00:00 host kernel: text   journalctl -o short-iso(-precise), rsyslog
//	[  816.907974] host kernel: text               journalctl -o short-monotonic
//	{"MESSAGE": "...", "__REALTIME_TIMESTAMP": "..."}  journalctl -o json
//
// Lines with none of these (training logs, pasted continuation lines) come
// back with Prefixed false and the whole line as Text.
//
// Public API:
//
//	ParseLine(b []byte, opts ParseOptions) Line
//	NewScanner(r io.Reader, maxLine int) *Scanner      bounded line splitter
//	Open(ctx, Config) (*Reader, error)                 this boot's kernel log, live
//	    Config{Since, Follow, OnlyNew, ProcRoot, DevKmsg, NoJournal, NoDmesg}
//	(*Reader).Next() (Line, error); Source(); Close()
//	ReadSince(ctx, Config, max int) ([]Line, string, error)   lines + source name
//	SplitGlued(b []byte) int                           where a second record starts
//	BootTime(procRoot string) (time.Time, error)       btime from <procRoot>/stat
package kmsg
