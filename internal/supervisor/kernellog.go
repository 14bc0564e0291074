package supervisor

import (
	"context"
	"time"

	"github.com/torchmem/torchmem/internal/kmsg"
)

// KmsgLog reads this boot's kernel log since a time from /dev/kmsg,
// journalctl -k or dmesg, whichever works (kmsg.ReadSince), keeping at
// most the last 2000 lines.
func KmsgLog(procRoot string) KernelLog {
	return func(ctx context.Context, since time.Time) ([]string, error) {
		lines, _, err := kmsg.ReadSince(ctx, kmsg.Config{Since: since, ProcRoot: procRoot}, 0)
		out := make([]string, 0, len(lines))
		for _, l := range lines {
			out = append(out, l.Text)
		}
		if len(out) > 2000 {
			out = out[len(out)-2000:]
		}
		return out, err
	}
}
