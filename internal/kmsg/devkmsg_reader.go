package kmsg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/sys/unix"
)

// openDevKmsg opens /dev/kmsg non-blocking. Each read returns one record;
// EAGAIN means "no more for now": the end when not following, a poll
// otherwise. EPIPE means records were overwritten while we read: skip on.
func openDevKmsg(ctx context.Context, cfg Config, popts ParseOptions) (*Reader, error) {
	path := cfg.DevKmsg
	if path == "" {
		path = "/dev/kmsg"
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if cfg.OnlyNew {
		// SEEK_END on /dev/kmsg moves to the next record to be logged.
		if _, err := unix.Seek(fd, 0, unix.SEEK_END); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("seek %s: %w", path, err)
		}
	}
	buf := make([]byte, 16<<10) // kernel refuses reads smaller than a record
	next := func() (Line, error) {
		for {
			n, err := unix.Read(fd, buf)
			switch {
			case errors.Is(err, unix.EPIPE) || errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EAGAIN):
				if !cfg.Follow {
					return Line{}, io.EOF
				}
				if err := waitReadable(ctx, fd); err != nil {
					return Line{}, err
				}
				continue
			case err != nil:
				return Line{}, fmt.Errorf("read %s: %w", path, err)
			case n == 0:
				return Line{}, io.EOF
			}
			rec := buf[:n]
			if i := bytes.IndexByte(rec, '\n'); i >= 0 {
				rec = rec[:i] // drop the " KEY=value" dictionary lines
			}
			ln := ParseLine(rec, popts)
			return ln, nil
		}
	}
	return &Reader{source: path, next: next, close: func() error { return unix.Close(fd) }, since: cfg.Since}, nil
}

// waitReadable polls fd in short slices so a cancelled context ends a follow.
func waitReadable(ctx context.Context, fd int) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int((200 * time.Millisecond).Milliseconds()))
		if err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("poll kmsg: %w", err)
		}
		if n > 0 {
			return nil
		}
	}
}
