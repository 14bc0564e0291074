package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/textwrap"
	"github.com/torchmem/torchmem/internal/tracerun"
	"github.com/torchmem/torchmem/internal/units"
)

// torchmem estimate --trace --real -- python train.py ARGS: the script
// run for real on this host's GPU (tracerun.RunReal), the allocator's own
// figures reported through the --trace printer, marked as measured.

// traceRealSetup is what runEstimateTrace has checked already.
type traceRealSetup struct {
	maxBytes int64
	margin   float64
	gpu      estimate.GPU
	haveGPU  bool
}

func runEstimateTraceReal(env *Env, f *estimateFlags, tf *traceFlags, argv []string, s traceRealSetup) error {
	if tf.device != "meta" {
		return fmt.Errorf("--real runs on the GPU: leave out --trace-device %s", tf.device)
	}
	// The program's own output goes to stderr: stdout is the report (--json).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM) // the program's group too
	defer stop()
	r, err := tracerun.RunReal(ctx, tracerun.Options{Argv: argv, Steps: tf.steps,
		MaxBytes: s.maxBytes, Timeout: tf.timeout, Output: env.Stderr, AllocEnv: tf.allocEnv},
		tracerun.RealOptions{SysRoot: env.SysRoot, ProcRoot: env.ProcRoot, Snapshot: tf.snapshot})
	if err != nil {
		return err
	}
	g := s.gpu
	if !s.haveGPU && r.GPUTotalBytes > 0 { // no --gpu: the GPU it ran on
		g = estimate.GPU{Name: r.GPUName, MemoryBytes: r.GPUTotalBytes}
	}
	var fit *estimate.Fit
	if g.MemoryBytes > 0 {
		if fit, err = estimate.FitMeasured(r.Result, g, s.margin); err != nil {
			return err
		}
		if f.gpuMemory != "" {
			fit.GPUMemoryUnit = memoryUnit(f.gpuMemory)
		}
		fit.Partial = estimate.RunPartial(r.End, r.Steps, tf.steps)
	}
	if f.json {
		err = writeJSON(env.Stdout, struct {
			*tracerun.Real
			*estimate.Fit
		}{r, fit})
	} else {
		err = printTraceReal(env, r, fit, argv, r.SnapshotFile)
	}
	return traceExit(err, fit, estimate.RunPartial(r.End, r.Steps, tf.steps))
}

// printTraceReal prints a measured run with the pieces of the --trace
// report: the peak rows (noting each figure's source), phase and
// breakdown, the sites at the peak, the fit.
func printTraceReal(env *Env, r *tracerun.Real, fit *estimate.Fit, argv []string, snap string) error {
	w := env.Stdout
	lang := env.lang()
	t := estimateCatalog.T(lang)
	tt := traceCatalog.T(lang)
	rt := traceRealCatalog.T(lang)
	fmt.Fprintln(w, rt("real.header", shellJoin(argv)))
	fmt.Fprintln(w, "  "+rt("real.setup", r.GPUName, r.Torch, strconv.Itoa(r.Steps), strconv.Itoa(r.TraceEntries)))
	process := rt("real.note.nvml")
	if !r.ProcessMeasured {
		process = rt("real.note.modelled")
	}
	rows := [][2]string{
		{t("estimate.row.peakAllocated"), units.Bytes(r.PeakAllocatedBytes) + "\t" + rt("real.note.measured", t("estimate.note.peakAllocated"))},
		{t("estimate.row.peakReserved"), units.Bytes(r.PeakReservedBytes) + "\t" + rt("real.note.measured", t("estimate.note.peakReserved"))},
		{t("estimate.row.process"), units.Bytes(r.ProcessBytes) + "\t" + process},
	}
	label := func(name string) string {
		if id := "real.cat." + name; rt(id) != id {
			return rt(id)
		}
		return traceCategoryLabel(t, tt, name)
	}
	if err := printPeaks(w, t, rows, r.PeakPhase, r.Breakdown, label); err != nil {
		return err
	}
	printRealSites(w, tt, r.Sites)
	printTraceRealNotes(w, rt, r)
	if snap != "" {
		fmt.Fprintln(w, "\n"+rt("real.snapshot", snap))
	}
	if fit != nil {
		printTraceFit(w, t, tt, r.TraceResult, fit)
	}
	return nil
}

// printRealSites lists the sites of the peak as printTraceSites does, with
// the library line that allocated for each; a native frame (no Python
// line recorded) is cut to a column's width instead of read as file:line.
func printRealSites(w io.Writer, tt tr, sites []estimate.TraceSite) {
	if len(sites) == 0 {
		return
	}
	fmt.Fprintln(w, "\n"+tt("trace.sites"))
	tw := newTable(w)
	for _, s := range sites {
		where := s.Where
		if strings.Contains(where, ".py:") {
			where = shortFrame(where)
		} else {
			where = i18n.Cut(where, maxNativeWidth)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", units.Bytes(s.Bytes), where, s.Op)
	}
	_ = tw.Flush()
}

// maxNativeWidth: a C++ signature is cut to this many columns.
const maxNativeWidth = 60

func printTraceRealNotes(w io.Writer, rt tr, r *tracerun.Real) {
	if e := r.End; e != nil && e.Kind != "steps" {
		where := ""
		if len(e.Where) > 0 {
			where = " (" + shortFrame(e.Where[0]) + ")"
		}
		fmt.Fprintln(w, "\n"+textwrap.Wrap("", rt("real.end", strconv.Itoa(r.Steps), where, e.Message), textwrap.Width))
	}
	for _, n := range r.Notices {
		fmt.Fprintln(w, "\n"+textwrap.Wrap(rt("real.notice"), n, textwrap.Width))
	}
}

var traceRealEN = map[string]string{
	"real.header":                         "run on the GPU: %[1]s",
	"real.setup":                          "%[1]s, torch %[2]s, %[3]s optimizer steps, %[4]s allocator events recorded",
	"real.note.measured":                  "measured: %[1]s",
	"real.note.nvml":                      "measured: NVML for the job's processes, highest sample",
	"real.note.modelled":                  "not measured (no NVML): reserved + context + libraries",
	"real.cat.allocator_rounding":         "allocator rounding",
	"real.cat.cuda_context_and_libraries": "cuda context and libraries (measured)",
	"real.cat.other":                      "other",
	"real.snapshot":                       "the run's memory snapshot written to %[1]s (torchmem snapshot summary FILE, or PyTorch's memory_viz)",
	"real.end":                            "the run ended after %[1]s optimizer steps%[2]s: %[3]s; the figures are those of what ran",
	"real.notice":                         "notice: ",
}

var traceRealZH = map[string]string{
	"real.header":                         "在 GPU 上实际运行：%[1]s",
	"real.setup":                          "%[1]s，torch %[2]s，%[3]s 个优化器步，记录了 %[4]s 个分配器事件",
	"real.note.measured":                  "实测：%[1]s",
	"real.note.nvml":                      "实测：NVML 对作业进程的采样最大值",
	"real.note.modelled":                  "未实测（没有 NVML）：已保留 + 上下文 + 库",
	"real.cat.allocator_rounding":         "分配器取整",
	"real.cat.cuda_context_and_libraries": "CUDA 上下文和库（实测）",
	"real.cat.other":                      "其他",
	"real.snapshot":                       "本次运行的显存快照已写入 %[1]s（torchmem snapshot summary FILE 或 PyTorch 的 memory_viz 可打开）",
	"real.end":                            "运行在 %[1]s 个优化器步后结束%[2]s：%[3]s；数字是已运行部分的",
	"real.notice":                         "注意：",
}

var traceRealCatalog = i18n.NewCatalog("estimate-trace-real", map[language.Tag]map[string]string{
	i18n.EN: traceRealEN,
	i18n.ZH: traceRealZH,
})
