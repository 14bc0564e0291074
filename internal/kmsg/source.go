package kmsg

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNotPresent means no kernel log source could be read on this host
// (not root, no journald, dmesg restricted).
var ErrNotPresent = errors.New("no readable kernel log (/dev/kmsg, journalctl -k, dmesg)")

// Config says what to read and from where.
type Config struct {
	// Since drops lines older than this wall-clock time (zero: whole boot).
	Since time.Time
	// Follow keeps reading new lines until the context ends.
	Follow bool
	// OnlyNew skips everything already in the log (with Follow: report
	// from now on). Exact for /dev/kmsg and journalctl; dmesg falls back
	// to Since.
	OnlyNew bool
	// ProcRoot locates <ProcRoot>/stat for the boot time ("/proc").
	ProcRoot string
	// DevKmsg is the /dev/kmsg path; "" means "/dev/kmsg", "-" skips it.
	DevKmsg string
	// NoJournal and NoDmesg skip those fallbacks (tests, or a forced source).
	NoJournal, NoDmesg bool
}

// sinceSlack widens Config.Since: wall times made from the kernel's uptime
// and /proc/stat's whole-second btime can be up to a second early.
const sinceSlack = 2 * time.Second

// Reader yields kernel log lines from one source.
type Reader struct {
	source string
	next   func() (Line, error)
	close  func() error
	since  time.Time
}

// Source names where lines come from: "/dev/kmsg", "journalctl -k" or "dmesg".
func (r *Reader) Source() string { return r.source }

// Next returns the next line at or after Config.Since; io.EOF at the end
// of the log (never, when following, until the context ends).
func (r *Reader) Next() (Line, error) {
	for {
		ln, err := r.next()
		if err != nil {
			return ln, err
		}
		if !r.since.IsZero() && !ln.Wall.IsZero() && ln.Wall.Before(r.since.Add(-sinceSlack)) {
			continue
		}
		return ln, nil
	}
}

// Close releases the source (kills a journalctl/dmesg child).
func (r *Reader) Close() error { return r.close() }

// BootTime reads the boot time ("btime") from <procRoot>/stat.
func BootTime(procRoot string) (time.Time, error) {
	path := filepath.Join(procRoot, "stat")
	b, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, fmt.Errorf("read %s: %w", path, err)
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("btime ")); ok {
			s, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("parse %s btime: %w", path, err)
			}
			return time.Unix(s, 0), nil
		}
	}
	return time.Time{}, fmt.Errorf("read %s: no btime line", path)
}

// Open returns a reader of this boot's kernel log from the first source
// that works: /dev/kmsg (needs root or CAP_SYSLOG), `journalctl -k -o
// json`, `dmesg`. ErrNotPresent when none does; the error then lists why.
func Open(ctx context.Context, cfg Config) (*Reader, error) {
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	boot, _ := BootTime(cfg.ProcRoot) // zero boot: uptimes stay relative
	popts := ParseOptions{BootTime: boot}
	var errs []error
	if cfg.DevKmsg != "-" {
		r, err := openDevKmsg(ctx, cfg, popts)
		if err == nil {
			return r, nil
		}
		errs = append(errs, err)
	}
	if !cfg.NoJournal {
		r, err := openJournal(ctx, cfg, popts)
		if err == nil {
			return r, nil
		}
		errs = append(errs, err)
	}
	if !cfg.NoDmesg {
		if cfg.OnlyNew && cfg.Since.IsZero() {
			cfg.Since = time.Now()
		}
		args := []string{"dmesg"}
		if cfg.Follow {
			args = append(args, "-w")
		}
		r, err := openCommand(ctx, cfg, popts, "dmesg", args, true)
		if err == nil {
			return r, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("%w: %w", ErrNotPresent, errors.Join(errs...))
}

// openJournal opens `journalctl -k`. Following, a new kernel line may be
// hours away, so whether the journal has this boot's kernel log at all is
// asked first with a one-line read: without it a container with no journal
// waited forever instead of falling back to dmesg.
func openJournal(ctx context.Context, cfg Config, popts ParseOptions) (*Reader, error) {
	if !cfg.Follow {
		return openCommand(ctx, cfg, popts, "journalctl -k", journalArgs(cfg), true)
	}
	probe := Config{ProcRoot: cfg.ProcRoot}
	r, err := openCommand(ctx, probe, popts, "journalctl -k", append(journalArgs(probe), "-n", "1"), true)
	if err != nil {
		return nil, err
	}
	_ = r.Close()
	return openCommand(ctx, cfg, popts, "journalctl -k", journalArgs(cfg), false)
}

func journalArgs(cfg Config) []string {
	args := []string{"journalctl", "-k", "-b", "-o", "json", "--no-pager", "-q"}
	if !cfg.Since.IsZero() {
		args = append(args, "--since=@"+strconv.FormatInt(cfg.Since.Unix(), 10))
	}
	if cfg.OnlyNew {
		args = append(args, "-n", "0")
	}
	if cfg.Follow {
		args = append(args, "-f")
	}
	return args
}

// openCommand runs a log command and, with needLine, keeps it only if it
// yields a line (journalctl in a container without a journal prints
// nothing).
func openCommand(ctx context.Context, cfg Config, popts ParseOptions, name string, args []string, needLine bool) (*Reader, error) {
	path, err := exec.LookPath(args[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(cctx, path, args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sc := NewScanner(out, 0)
	stop := func() error { cancel(); _ = cmd.Wait(); return nil }
	first := true
	next := func() (Line, error) {
		if sc.Scan() {
			first = false
			return ParseLine(sc.Bytes(), popts), nil
		}
		if err := sc.Err(); err != nil {
			return Line{}, fmt.Errorf("read %s output: %w", name, err)
		}
		return Line{}, io.EOF
	}
	r := &Reader{source: name, close: stop, since: cfg.Since}
	if !needLine {
		r.next = next
		return r, nil
	}
	ln, err := next()
	if err != nil {
		_ = stop()
		msg := bytes.TrimSpace(stderr.Bytes())
		if first && len(msg) > 0 {
			// "dmesg: read kernel buffer failed: …": the tool names itself.
			return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(firstLine(msg), args[0]+": "))
		}
		if first {
			return nil, fmt.Errorf("%s: no output", name)
		}
		return nil, err
	}
	pending := &ln
	r.next = func() (Line, error) {
		if pending != nil {
			l := *pending
			pending = nil
			return l, nil
		}
		return next()
	}
	return r, nil
}

func firstLine(b []byte) string {
	s := bufio.NewScanner(bytes.NewReader(b))
	s.Scan()
	return s.Text()
}

// ReadSince reads up to max lines (0: no limit) of this boot's kernel log
// at or after cfg.Since, without following: what a post-mortem needs.
func ReadSince(ctx context.Context, cfg Config, max int) ([]Line, string, error) {
	cfg.Follow = false
	r, err := Open(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	var lines []Line
	for max <= 0 || len(lines) < max {
		ln, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return lines, r.Source(), err
		}
		lines = append(lines, ln)
	}
	return lines, r.Source(), nil
}
