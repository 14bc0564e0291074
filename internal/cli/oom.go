package cli

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/oomexplain"
	"github.com/torchmem/torchmem/internal/shm"
	"golang.org/x/sys/unix"
	"golang.org/x/text/language"
)

func init() { register("oom", newOomCmd) }

type oomFlags struct {
	json   bool
	since  string
	pids   []int
	follow bool
}

func newOomCmd(env *Env) *cobra.Command {
	var f oomFlags
	cmd := &cobra.Command{
		Use:   "oom [FILE...]",
		Short: "Find and explain out-of-memory incidents (kernel OOM kills, CUDA OOM, DataLoader/shm/torchrun/Slurm failures) in kernel and training logs",
		Long: `Without FILE, read this boot's kernel log (/dev/kmsg as root, else journalctl -k,
else dmesg). With FILEs (or - for stdin), read any mix of kernel logs (dmesg,
dmesg -T, journalctl -k in any output format, /var/log/messages) and training
logs (stdout/stderr of PyTorch, torchrun, Slurm). Print one block per incident:
what happened, when, to whom, the numbers, and what to do.`,
		Example: `  torchmem oom
  torchmem oom --since 2h --pid 4242
  torchmem oom /var/log/messages slurm-12345.out
  journalctl -k -o json | torchmem oom --json -
  torchmem oom --follow`,
		RunE: func(cmd *cobra.Command, args []string) error { return runOom(cmd.Context(), env, &f, args) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, `print {"incidents": [...]} (sizes in bytes; with --follow one JSON object per line)`)
	fl.StringVar(&f.since, "since", "", "only incidents at or after this time: a duration back from now (2h, 30m) or a time (2026-11-29 14:00, RFC 3339)")
	fl.IntSliceVar(&f.pids, "pid", nil, "only incidents about these pids (repeatable, comma-separated)")
	fl.BoolVar(&f.follow, "follow", false, "keep reading the kernel log and report incidents as they happen")
	return cmd
}

func runOom(ctx context.Context, env *Env, f *oomFlags, args []string) error {
	since, err := oomParseSince(f.since, time.Now())
	if err != nil {
		return err
	}
	if f.follow {
		if len(args) > 0 {
			return errors.New("--follow reads the live kernel log; it takes no FILE")
		}
		return oomFollow(ctx, env, f, since)
	}
	if len(args) == 0 && stdinIsData(env.Stdin) {
		// `torchmem oom < file` and `dmesg | torchmem oom`: the data given
		// wins over this host's kernel log.
		args = []string{"-"}
	}
	var incs []oomexplain.Incident
	var errs []error
	dropped := 0
	// This host's /dev/shm and fd limit are facts about the log only when
	// the log is this host's own kernel log: read them only then.
	hostCtx := oomexplain.Context{}
	if len(args) == 0 {
		hostCtx = oomHostContext(env)
		hostCtx.SameHost = true
	}
	hostCtx.Lang = f.lang(env)
	if len(args) == 0 {
		incs, dropped, err = oomReadKernel(ctx, env, since)
		if err != nil {
			return err
		}
	}
	var read []string // the files that could be opened: "none found in X" only names those
	for _, name := range args {
		got, opened, err := oomReadFile(env, name)
		incs = append(incs, got.Incidents...)
		dropped += got.Dropped
		if opened {
			read = append(read, name)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	incs = oomexplain.Group(oomexplain.Filter(incs, since, f.pids))
	oomexplain.ExplainAll(incs, hostCtx)
	if dropped > 0 {
		fmt.Fprintf(env.Stderr, "torchmem: %d more incidents were found but not kept (at most %d per input); narrow with --since or --pid\n", dropped, oomexplain.DefaultMaxIncidents)
	}
	if len(args) == 0 || len(read) > 0 || f.json {
		if err := oomPrint(env.Stdout, env.tr(), oomReport{Incidents: incs, Truncated: dropped > 0, Dropped: dropped}, f.json, read); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return &ExitError{Code: 1, Err: errors.Join(errs...)}
	}
	return nil
}

// oomReadKernel parses this boot's kernel log; dropped counts incidents
// past the cap.
func oomReadKernel(ctx context.Context, env *Env, since time.Time) (incs []oomexplain.Incident, dropped int, err error) {
	res, src, err := oomexplain.ReadKernelAll(ctx, oomexplain.LogConfig{Since: since, ProcRoot: env.ProcRoot}, oomexplain.Options{})
	err = oomKernelHint(err)
	if src != "" && src != "/dev/kmsg" {
		fmt.Fprintf(env.Stderr, "torchmem: reading the kernel log through %s (/dev/kmsg needs root)\n", src)
	}
	return res.Incidents, res.Dropped, err
}

// stdinIsData: standard input is a pipe or a redirected file, not a
// terminal or /dev/null (a script or CI without input).
func stdinIsData(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeNamedPipe != 0 || st.Mode().IsRegular()
}

// oomReadFile parses one file, or stdin for "-"; gzip-compressed input
// (rotated /var/log/messages-*.gz, syslog.2.gz) is read through gunzip.
// opened is false when the file could not be opened at all.
func oomReadFile(env *Env, name string) (res oomexplain.Result, opened bool, err error) {
	var in io.Reader = env.Stdin
	if name != "-" {
		fh, err := os.Open(name)
		if err != nil {
			return res, false, err // *PathError: "open NAME: no such file or directory"
		}
		if st, err := fh.Stat(); err == nil && st.IsDir() {
			fh.Close()
			return res, false, fmt.Errorf("%s: is a directory (give the log files in it)", name)
		}
		defer fh.Close()
		in = fh
	}
	br := bufio.NewReaderSize(in, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return res, true, fmt.Errorf("read %s: %w", name, err)
		}
		defer zr.Close()
		res, err = oomexplain.ParseAll(zr, oomexplain.Options{Source: name})
		return res, true, err
	}
	res, err = oomexplain.ParseAll(br, oomexplain.Options{Source: name})
	return res, true, err
}

// oomFollow reports kernel incidents as they are logged until interrupted.
func oomFollow(ctx context.Context, env *Env, f *oomFlags, since time.Time) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, unix.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fmt.Fprintln(env.Stderr, "torchmem: following the kernel log (Ctrl-C to stop)")
	n := 0
	var printErr error
	// Follow means "from now on" unless --since says otherwise.
	cfg := oomexplain.LogConfig{Since: since, OnlyNew: since.IsZero(), ProcRoot: env.ProcRoot}
	hostCtx := oomHostContext(env)
	hostCtx.Lang = f.lang(env)
	err := oomexplain.Follow(ctx, cfg, oomexplain.Options{}, hostCtx, func(inc oomexplain.Incident) {
		if printErr != nil || len(oomexplain.Filter([]oomexplain.Incident{inc}, time.Time{}, f.pids)) == 0 {
			return
		}
		n++
		if printErr = oomPrintOne(env.Stdout, env.tr(), inc, n, f.json); printErr != nil {
			cancel()
		}
	})
	if printErr != nil {
		return printErr
	}
	return oomKernelHint(err)
}

// oomKernelHint adds what to do when no kernel log source is readable.
func oomKernelHint(err error) error {
	if errors.Is(err, oomexplain.ErrNoKernelLog) {
		return fmt.Errorf("%w\n(run as root, or as a member of the systemd-journal or adm group, or give a saved log: torchmem oom FILE)", err)
	}
	return err
}

// lang is the language of the explanations: --lang or the locale's for
// people, English for --json (scripts never see it change).
func (f *oomFlags) lang(env *Env) language.Tag {
	if f.json {
		return language.English
	}
	return env.lang()
}

// oomHostContext is what this host says about shm and fd limits.
func oomHostContext(env *Env) oomexplain.Context {
	var c oomexplain.Context
	if u, err := shm.Read(env.Root); err == nil {
		c.ShmSizeBytes = int64(u.SizeBytes)
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil {
		c.NoFileLimit = rl.Cur
	}
	return c
}

var oomTimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// oomParseSince accepts "2h" (back from now) or a date/time.
func oomParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, l := range oomTimeLayouts {
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (2h, 30m) or a time (2026-11-29 14:00, RFC 3339)", s)
}
