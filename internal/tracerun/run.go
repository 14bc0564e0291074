// Package tracerun runs a user's training script under torchmem's Python
// tracer (torchmem estimate --trace): the GPU redirected to the meta device,
// every storage the GPU would hold recorded, the first optimizer steps
// only, and the trace replayed through the estimator's allocator model.
package tracerun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/torchmem/torchmem/internal/allocconf"
	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/hook"
)

// Defaults: a trace of two steps of a small model is a few MB; a 7B model's
// first step some hundred MB. The cap keeps a runaway loop from filling the disk.
const (
	DefaultSteps    = 2
	DefaultMaxBytes = 1 << 30
	DefaultTimeout  = 10 * time.Minute
)

// leftoverWait is how long the program's output is read after it exited,
// for what its leftover processes still write, before they are killed.
const leftoverWait = 2 * time.Second

// Options say what to run and how.
type Options struct {
	Argv     []string // the program: python train.py ARGS...
	Steps    int
	Device   string // meta (default) or cpu; RunReal sets real
	GPUName  string
	GPUBytes int64
	GPUCC    int // compute capability x10 (90 for sm90); 0: sm90
	MaxBytes int64
	// World: the ranks of a process group whose size neither the program
	// nor its launcher gives (--world-size); 0: one.
	World int
	// Autocast: "bfloat16" or "float16" traces the forward under CUDA
	// autocast (the amp lever's retrace); "": as the program runs it.
	Autocast string
	Timeout  time.Duration
	// Alloc: the options of PyTorch's allocator the job runs with (the
	// replay follows them: Trace.Alloc); AllocEnv, when not "", is the
	// PYTORCH_CUDA_ALLOC_CONF the program is given (--alloc-conf: on a
	// GPU, --real, the real allocator follows it too).
	Alloc    allocconf.Conf
	AllocEnv string
	// Output gets the program's own stdout and stderr.
	Output io.Writer
}

// Run traces the program and parses its trace. A program that fails after
// tracing some steps is not an error: the trace says where it stopped.
func Run(ctx context.Context, o Options) (*estimate.Trace, error) {
	if len(o.Argv) == 0 {
		return nil, errors.New("--trace: give the program after --, e.g. -- python train.py")
	}
	o = o.withDefaults()
	dir, err := os.MkdirTemp("", "torchmem-trace-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	runErr, err := execTraced(ctx, o, dir, nil)
	if err != nil {
		return nil, err
	}
	t, err := readTrace(dir, o, runErr)
	if err != nil {
		return nil, err
	}
	if t.End == nil {
		reason := "the program ended without a word from the tracer"
		if runErr != nil {
			reason = fmt.Sprintf("the program was stopped (%v) before the tracer could finish", runErr)
		}
		t.End = &estimate.TraceNote{Kind: "killed", Message: reason}
	}
	return t, nil
}

func (o Options) withDefaults() Options {
	if o.Device == "" {
		o.Device = "meta"
	}
	if o.Steps <= 0 {
		o.Steps = DefaultSteps
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// execTraced runs the program with the tracer armed to write into dir;
// started, if not nil, gets the program's pid (its process group) once it
// runs. runErr is the program's own failure; err is torchmem's (the
// timeout, a tracer that cannot be installed).
func execTraced(ctx context.Context, o Options, dir string, started func(pid int)) (runErr, err error) {
	env, err := hook.InstallTrace(dir, hook.TraceOptions{Steps: o.Steps, Device: o.Device,
		GPUName: o.GPUName, GPUBytes: o.GPUBytes, GPUCC: o.GPUCC, MaxBytes: o.MaxBytes, World: o.World, Autocast: o.Autocast})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.Argv[0], o.Argv[1:]...)
	if o.AllocEnv != "" {
		env = append(env, allocconf.EnvCUDA+"="+o.AllocEnv)
	}
	cmd.Env = hook.MergeEnv(os.Environ(), env)
	cmd.Stdout, cmd.Stderr = o.Output, o.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// What the program leaves in its process group when it ends (a
	// DataLoader's forkserver and resource tracker on Python 3.14, whose
	// default start method is forkserver, or a worker) holds its output
	// open, and Wait would wait for it: the program's end is the trace's.
	cmd.WaitDelay = leftoverWait
	if runErr = cmd.Start(); runErr == nil {
		if started != nil {
			started(cmd.Process.Pid)
		}
		runErr = cmd.Wait()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(runErr, exec.ErrWaitDelay) {
			runErr = nil // the program itself exited 0; its leftovers held the output
		}
	}
	if ctx.Err() == context.DeadlineExceeded {
		return runErr, fmt.Errorf("--trace: the program ran past --trace-timeout %s", o.Timeout)
	}
	return runErr, nil
}

// readTrace parses dir's trace file.
func readTrace(dir string, o Options, runErr error) (*estimate.Trace, error) {
	f, err := os.Open(filepath.Join(dir, hook.TraceFile))
	if errors.Is(err, os.ErrNotExist) {
		if runErr != nil {
			return nil, fmt.Errorf("--trace: %s failed before importing torch: %v", o.Argv[0], runErr)
		}
		return nil, fmt.Errorf("--trace: %s never imported torch: nothing to trace", o.Argv[0])
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := estimate.ParseTrace(io.LimitReader(f, o.MaxBytes+maxTraceSlack))
	if err != nil {
		return nil, fmt.Errorf("trace of %s: %w", o.Argv[0], err)
	}
	t.Alloc = o.Alloc
	if t.End != nil && t.End.Kind == "unsupported" {
		// Nothing of the program ran (a launcher; --real without CUDA):
		// the tracer's sentence is the error.
		return nil, errors.New(t.End.Message)
	}
	if code := exitStatus(runErr); code > 0 && t.End != nil && t.End.Kind == "exit" {
		// sys.exit("no data at ./data") or exit(1): to the tracer's atexit
		// hook that is an ordinary end, but the program gave up, so what
		// it did not run is not in the trace.
		t.End = &estimate.TraceNote{Kind: "failed", Message: fmt.Sprintf("exit status %d", code)}
	}
	return t, nil
}

// exitStatus is the program's own non-zero exit status, 0 when it exited
// cleanly, did not start, or was killed by a signal.
func exitStatus(runErr error) int {
	var ee *exec.ExitError
	if errors.As(runErr, &ee) && ee.ExitCode() > 0 {
		return ee.ExitCode()
	}
	return 0
}

// maxTraceSlack: the end line written past the cap.
const maxTraceSlack = 64 << 10
