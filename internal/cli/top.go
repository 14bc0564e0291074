package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/identity"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/tui"
)

func init() { register("top", newTopCmd) }

type topFlags struct {
	once, json, expand bool
	pssFromSmaps       bool
	interval, pssEvery time.Duration
	sort, filter       string
	cgroup, gpuFake    string
	pids               []int
	width              int
	cluster            clusterFlags // --prometheus: the cluster view (top_cluster.go)
}

func newTopCmd(env *Env) *cobra.Command {
	var f topFlags
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Live view of GPUs, PyTorch jobs and their host memory (RSS, PSS, USS, swap), cgroups and PSI",
		Long: `top shows, refreshed every --interval, each GPU (used, reserved, total, who
uses it) and each PyTorch job as a tree of processes (the main process and its
DataLoader workers) with GPU memory, RSS, PSS, USS and swap per process, the
job's cgroup limit and headroom, host memory available and memory pressure.

RSS comes from /proc/<pid>/status every tick; PSS and USS from smaps_rollup,
re-read every --pss-period or when a process's RSS moves by more than 5%
(reading it costs ~2.5 ms per torch process); their age is shown.

Keys: ? help, q quit, s next sort key, r reverse it, up/down or j/k select
a process, x signal it (asks first: TERM, KILL or INT), e fold/list
workers, / filter, p re-read PSS now, esc close a dialog or the selection.
From 120 columns on, each process has its CPU% and state and a memory bar,
each job a history of its RSS. --lang zh (or a zh_CN locale) speaks Chinese.
NO_COLOR turns colours off.`,
		Example: `  torchmem top
  torchmem top --once
  torchmem top --json | jq '.jobs[].totals'
  torchmem top --sort gpu --filter train.py --interval 2s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.cluster.intervalSet = cmd.Flags().Changed("interval")
			return runTop(cmd.Context(), env, f)
		},
	}
	fl := cmd.Flags()
	addClusterFlags(fl, &f.cluster, "show the cluster instead of this host: every torchmem agent's node, jobs, GPUs and OOMs, from this Prometheus (http://host:9090)")
	fl.BoolVar(&f.once, "once", false, "print one table and exit")
	fl.BoolVar(&f.json, "json", false, "print one sample as JSON and exit (schema: docs/top.md)")
	fl.DurationVar(&f.interval, "interval", time.Second, "refresh interval of the live view")
	fl.DurationVar(&f.pssEvery, "pss-period", sample.DefaultPSSPeriod, "longest reuse of a PSS figure (smaps_rollup); negative: never read PSS")
	fl.StringVar(&f.sort, "sort", "pss", "sort key: "+strings.Join(tui.SortKeys, ", "))
	fl.StringVar(&f.filter, "filter", "", "show only jobs with a process whose PID, name or command line contains this")
	fl.BoolVar(&f.expand, "expand", false, "list every DataLoader worker instead of folding them")
	fl.IntSliceVar(&f.pids, "pid", nil, "sample only these processes, as one job")
	fl.StringVar(&f.cgroup, "cgroup", "", "sample only the processes of this cgroup (path as in /proc/<pid>/cgroup), as one job")
	fl.BoolVar(&f.pssFromSmaps, "pss-from-smaps", false, "sum /proc/<pid>/smaps instead of reading smaps_rollup, as smem does (slower; for comparisons)")
	fl.IntVar(&f.width, "width", 0, "table width for --once (default: $COLUMNS or 80)")
	fl.StringVar(&f.gpuFake, "gpu-fake", "", "read GPUs from a recorded JSON file instead of the driver (tests, demos)")
	_ = fl.MarkHidden("gpu-fake")
	_ = cmd.RegisterFlagCompletionFunc("sort", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return tui.SortKeys, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func runTop(ctx context.Context, env *Env, f topFlags) error {
	if f.cluster.url != "" {
		return runTopCluster(ctx, env, f)
	}
	if !tui.ValidSort(f.sort) {
		return fmt.Errorf("--sort %q: want one of %s", f.sort, strings.Join(tui.SortKeys, ", "))
	}
	if f.interval < 100*time.Millisecond {
		return fmt.Errorf("--interval %s: at least 100ms", f.interval)
	}
	backend, notice, err := topGPU(env, f.gpuFake)
	if err != nil {
		return err
	}
	defer backend.Close()
	opts := sample.Options{ProcRoot: env.ProcRoot, SysRoot: env.SysRoot, GPU: backend, GPUNotice: notice,
		CgroupPath: f.cgroup, PSSPeriod: f.pssEvery, PSSFromSmaps: f.pssFromSmaps,
		Identity: identityResolver(identity.DefaultPodResourcesSocket)}
	if len(f.pids) > 0 {
		if err := topAnyPID(env.ProcRoot, f.pids); err != nil {
			return err
		}
		pids := f.pids
		opts.PIDs = func() []int { return pids }
	}
	s, err := sample.New(opts)
	if err != nil {
		return err
	}
	view := tui.ViewOptions{Sort: f.sort, Filter: f.filter, Expand: f.expand, Width: topWidth(f.width), Lang: env.lang()}
	if f.json || f.once || !isTerminal(env.Stdout) {
		return topOnce(ctx, env.Stdout, s, f.json, view)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	view.Color = os.Getenv("NO_COLOR") == ""
	view.Width = 80
	return tui.Run(ctx, tui.Config{Sampler: s, Interval: f.interval, View: view, In: topKeys(env.Stdin), Out: env.Stdout,
		ProcRoot: env.ProcRoot, Root: env.Root, Lang: env.lang()})
}

func topOnce(ctx context.Context, w io.Writer, s *sample.Sampler, asJSON bool, view tui.ViewOptions) error {
	smp, err := s.Collect(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		// The JSON holds the jobs the table would show, in its order.
		smp.Jobs = tui.SelectJobs(smp.Jobs, view.Sort, view.Filter)
		return writeJSON(w, smp)
	}
	for _, l := range tui.Render(smp, view) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

// topGPU opens the GPU backend: a recorded fixture when asked, else the
// best the host has (NVML, nvidia-smi, or none with a notice).
func topGPU(env *Env, fake string) (gpu.Backend, string, error) {
	if fake != "" {
		b, err := gpu.NewFakeFromJSON(fake)
		return b, "", err
	}
	b, notice := gpu.Open(gpu.Options{SysRoot: env.SysRoot, ProcRoot: env.ProcRoot})
	return b, notice, nil
}

func topWidth(flag int) int {
	if flag > 0 {
		return flag
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n >= 40 {
		return n
	}
	return 80
}

// topKeys is where the live view reads keys: stdin when it is a terminal.
// Otherwise (`top < /dev/null`, `docker run -t` without -i) the view runs
// without keys until Ctrl-C: bubbletea cannot poll /dev/null and failed.
func topKeys(in io.Reader) io.Reader {
	if f, ok := in.(*os.File); ok && !term.IsTerminal(f.Fd()) {
		return nil
	}
	return in
}

// topAnyPID fails when no process of --pid exists: an empty "no jobs"
// view would hide a typo. Processes that exit later are dropped quietly.
func topAnyPID(procRoot string, pids []int) error {
	for _, pid := range pids {
		if _, err := os.Stat(filepath.Join(procRoot, strconv.Itoa(pid))); err == nil {
			return nil
		}
	}
	return fmt.Errorf("--pid: no such process: %s", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(pids)), ","), "[]"))
}
