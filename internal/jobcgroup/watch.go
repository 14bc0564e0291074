package jobcgroup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Watch delivers the group's memory events as they happen, so the caller
// samples at once instead of at its next tick. v1: an eventfd on
// memory.oom_control and one per usage threshold (bytes) on
// memory.usage_in_bytes, registered through cgroup.event_control. v2: inotify
// on memory.events (v2 has no usage thresholds; memory.high is the v2 way to
// be told early). When ctx is done the watches are closed and no more events
// come; the channel itself is left open.
func (g *Group) Watch(ctx context.Context, thresholds []int64) (<-chan Event, error) {
	out := make(chan Event, 16)
	var files []*os.File
	var err error
	if g.version == 2 {
		files, err = g.watchV2(ctx, out)
	} else {
		files, err = g.watchV1(ctx, out, thresholds)
	}
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	go func() {
		<-ctx.Done()
		for _, f := range files {
			f.Close() // unblocks the readers, which then exit
		}
	}()
	return out, nil
}

func (g *Group) watchV1(ctx context.Context, out chan<- Event, thresholds []int64) ([]*os.File, error) {
	var files []*os.File
	reg := func(target, arg string, ev Event) error {
		efd, ctl, err := registerEventfd(g.Dir(), target, arg)
		if err != nil {
			return err
		}
		files = append(files, efd)
		go readEventfd(ctx, efd, ctl, out, ev)
		return nil
	}
	if err := reg("memory.oom_control", "", Event{Kind: "oom"}); err != nil {
		return files, err
	}
	for _, t := range thresholds {
		if err := reg("memory.usage_in_bytes", fmt.Sprint(t), Event{Kind: "threshold", Threshold: t}); err != nil {
			return files, err
		}
	}
	return files, nil
}

// registerEventfd writes "<eventfd> <fd of target> [arg]" to
// cgroup.event_control. The target file must stay open while registered,
// so it is returned with the eventfd and closed by the reader.
func registerEventfd(dir, target, arg string) (*os.File, *os.File, error) {
	tf, err := os.Open(filepath.Join(dir, target))
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", filepath.Join(dir, target), err)
	}
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		tf.Close()
		return nil, nil, fmt.Errorf("eventfd: %w", err)
	}
	line := fmt.Sprintf("%d %d", fd, tf.Fd())
	if arg != "" {
		line += " " + arg
	}
	if err := writeFile(filepath.Join(dir, "cgroup.event_control"), line); err != nil {
		unix.Close(fd)
		tf.Close()
		return nil, nil, err
	}
	// NewFile on a non-blocking fd puts it in the runtime poller: reads
	// park the goroutine instead of a thread.
	return os.NewFile(uintptr(fd), "eventfd:"+target), tf, nil
}

func readEventfd(ctx context.Context, efd, target *os.File, out chan<- Event, ev Event) {
	defer target.Close()
	buf := make([]byte, 8)
	for {
		if _, err := efd.Read(buf); err != nil {
			return
		}
		e := ev
		e.Time = time.Now()
		select {
		case out <- e:
		case <-ctx.Done():
			return
		default: // the loop is behind; it reads the counters anyway
		}
	}
}

func (g *Group) watchV2(ctx context.Context, out chan<- Event) ([]*os.File, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify_init1: %w", err)
	}
	path := g.file("memory.events")
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_MODIFY); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inotify_add_watch %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), "inotify:"+path)
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			select {
			case out <- Event{Kind: "events", Time: time.Now()}:
			case <-ctx.Done():
				return
			default:
			}
		}
	}()
	return []*os.File{f}, nil
}
