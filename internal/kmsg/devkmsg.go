package kmsg

// /dev/kmsg records (Documentation/ABI/testing/dev-kmsg), one per read():
//
//	6,1234,816907974,-;python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
//	 SUBSYSTEM=...        (dictionary lines, start with a space: skipped)
//
// Fields: priority (facility<<3|level), sequence, usec since boot, flags
// ('-' normal, 'c' continuation start, '+' fragment), then optional
// ",caller=T123" style fields before ';'. Non-printable bytes arrive escaped
// as \xHH.

import (
	"bytes"
	"time"
)

// parseKmsgRecord parses a /dev/kmsg header; false when b is not one.
func parseKmsgRecord(b []byte, ln *Line) ([]byte, bool) {
	semi := bytes.IndexByte(b, ';')
	if semi < 7 || semi > 128 {
		return b, false
	}
	var f [3]uint64
	head := b[:semi]
	for i := 0; i < 3; i++ {
		n, used := parseUint(head)
		if used == 0 || used >= len(head) || head[used] != ',' {
			return b, false
		}
		f[i] = n
		head = head[used+1:]
	}
	if len(head) == 0 || (head[0] != '-' && head[0] != 'c' && head[0] != '+') {
		return b, false
	}
	ln.Priority = int(f[0] & 7)
	ln.Seq, ln.HasSeq = f[1], true
	ln.Uptime, ln.HasUptime = time.Duration(f[2])*time.Microsecond, true
	ln.Cont = head[0] == '+' || head[0] == 'c'
	ln.Ident = "kernel"
	ln.Text = unescapeKmsg(b[semi+1:])
	return b[semi+1:], true
}

func parseUint(b []byte) (uint64, int) {
	var n uint64
	i := 0
	for ; i < len(b) && i < 20 && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + uint64(b[i]-'0')
	}
	return n, i
}

// unescapeKmsg undoes the kernel's \xHH escaping of non-printable bytes.
func unescapeKmsg(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+3 < len(b) && b[i+1] == 'x' {
			if h, ok := hexByte(b[i+2], b[i+3]); ok {
				out = append(out, h)
				i += 3
				continue
			}
		}
		out = append(out, b[i])
	}
	return string(out)
}

func hexByte(a, b byte) (byte, bool) {
	x, ok1 := hexVal(a)
	y, ok2 := hexVal(b)
	return x<<4 | y, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
