package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/textwrap"
	"github.com/torchmem/torchmem/internal/tracerun"
	"github.com/torchmem/torchmem/internal/units"
)

// torchmem estimate --trace -- python train.py ARGS: the user's own script
// traced on the meta device (internal/tracerun), its allocations replayed
// through the allocator model (estimate.ReplayTrace).

type traceFlags struct {
	on       bool
	steps    int
	snapshot string
	timeout  time.Duration
	device   string
	maxBytes string
	real     bool
	retrace  bool
	combine  []string
	allocEnv string // --alloc-conf's text, given to the program
}

// addTraceFlags adds --trace and its flags; with --trace the command takes
// the program to run after "--".
func addTraceFlags(env *Env, cmd *cobra.Command, f *estimateFlags) {
	tf := &traceFlags{}
	fl := cmd.Flags()
	fl.BoolVar(&tf.on, "trace", false, "trace the program given after -- (python train.py ...) on the meta device instead of a built-in model")
	fl.IntVar(&tf.steps, "steps", tracerun.DefaultSteps, "with --trace: optimizer steps to trace")
	fl.StringVar(&tf.snapshot, "snapshot", "", "with --trace: write the predicted memory as a PyTorch memory-snapshot pickle")
	fl.DurationVar(&tf.timeout, "trace-timeout", tracerun.DefaultTimeout, "with --trace: stop the program after this long")
	fl.StringVar(&tf.device, "trace-device", "meta", "with --trace: meta (no data) or cpu (real tensors on the CPU: slow, for checking the meta run)")
	fl.StringVar(&tf.maxBytes, "trace-max-size", "1GiB", "with --trace: the trace file's size cap")
	fl.BoolVar(&tf.retrace, "retrace", true, "with --trace: when the program trains in float32, trace it again under autocast for the amp lever (takes as long again; --retrace=false skips it)")
	fl.StringSliceVar(&tf.combine, "combine", nil, "with --trace and a GPU: also replay these levers together (names as in the levers list, e.g. checkpoint,amp-bf16,8bit-optimizer)")
	fl.BoolVar(&tf.real, "real", false, "with --trace: run the steps for real on this host's CUDA GPU and report the measured peaks (the allocator's own trace, memory_stats, NVML)")
	cmd.Use += "\n  torchmem estimate --trace [--steps N] [--gpu NAME] [--json] [--snapshot FILE] -- python train.py ARGS..."
	cmd.Example += "\n  torchmem estimate --trace --gpu A100-80GB -- python train.py --batch 16"
	cmd.Example += "\n  torchmem estimate --trace --gpu H100-80GB -- torchrun --nproc-per-node 8 train.py   # one rank of the DDP job"
	cmd.Example += "\n  torchmem estimate --trace --gpu H100-80GB -- deepspeed --num_gpus 8 train.py --deepspeed ds_z3_config.json   # one rank of the ZeRO-3 job"
	cmd.Example += "\n  torchmem estimate --trace --real --json -- python train.py --batch 16   # on a GPU host: measured"
	cmd.Args = func(c *cobra.Command, args []string) error {
		if !tf.on {
			return cobra.NoArgs(c, args)
		}
		return nil
	}
	prev := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if !tf.on {
			for _, n := range []string{"steps", "snapshot", "trace-timeout", "trace-device", "trace-max-size", "real", "retrace", "combine"} {
				if c.Flags().Changed(n) {
					return fmt.Errorf("--%s goes with --trace", n)
				}
			}
			return prev(c, args)
		}
		f.worldSizeSet = c.Flags().Changed("world-size")
		var err error
		if f.opts.Alloc, tf.allocEnv, err = estimateAllocConf(f, c.Flags().Changed("alloc-conf")); err != nil {
			return err
		}
		return runEstimateTrace(env, f, tf, args)
	}
}

func runEstimateTrace(env *Env, f *estimateFlags, tf *traceFlags, argv []string) error {
	if f.config != "" || f.safetensors != "" || f.model != "" {
		return errors.New("--trace runs the program given after --: leave out --config, --safetensors and --model")
	}
	if len(argv) == 0 {
		return errors.New("--trace: give the program after --, e.g. torchmem estimate --trace -- python train.py")
	}
	if tf.steps < 1 {
		return fmt.Errorf("--steps %d: want at least 1", tf.steps)
	}
	maxBytes, err := units.ParseBytes(tf.maxBytes)
	if err != nil || maxBytes <= 0 {
		return fmt.Errorf("--trace-max-size %q: want a size such as 1GiB", tf.maxBytes)
	}
	margin, err := units.ParsePercent(f.margin)
	if err != nil {
		return fmt.Errorf("--margin: %w", err)
	}
	g, haveGPU, err := estimateGPU(env, f)
	if err != nil {
		return err
	}
	switch {
	case f.plan.gpus != 0 || f.plan.fineTune:
		return errors.New("--gpus and --fine-tune are the built-in models' plan: a trace's plan combines the levers of the trace")
	case f.plan.plan && !haveGPU:
		return errors.New("--plan searches what fits a GPU: give --gpu or --gpu-memory")
	case len(tf.combine) > 0 && !haveGPU:
		return errors.New("--combine replays levers against a GPU: give --gpu or --gpu-memory")
	case len(tf.combine) > 0 && tf.real:
		return errors.New("--combine replays the levers of a meta trace: leave out --real")
	}
	if err := estimate.CheckTraceLevers(tf.combine); err != nil {
		return fmt.Errorf("--combine: %w", err)
	}
	if tf.real {
		return runEstimateTraceReal(env, f, tf, argv, traceRealSetup{maxBytes, margin, g, haveGPU})
	}
	// The program's own output goes to stderr: stdout is the report (--json).
	// Ctrl-C or SIGTERM stops the traced program too: it runs in its own
	// process group, which the terminal's Ctrl-C does not reach.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	world := 0 // --world-size: a process group's size where the program and its launcher give none
	if f.worldSizeSet {
		world = f.opts.WorldSize
	}
	o := tracerun.Options{Argv: argv, Steps: tf.steps, Device: tf.device, World: world,
		GPUName: g.Name, GPUBytes: g.MemoryBytes, GPUCC: g.ComputeCapability, MaxBytes: maxBytes, Timeout: tf.timeout, Output: env.Stderr,
		Alloc: f.opts.Alloc, AllocEnv: tf.allocEnv}
	t, err := tracerun.Run(ctx, o)
	if err != nil {
		return err
	}
	var res *estimate.TraceResult
	var fit *estimate.Fit
	var combined *estimate.TraceCombination
	if haveGPU {
		var retraces []estimate.Retrace
		if tf.retrace {
			if retraces, err = traceAgain(ctx, env, o, t); err != nil {
				return err
			}
		}
		if res, fit, err = estimate.FitTrace(t, g, margin, retraces...); err != nil {
			return err
		}
		if f.plan.plan && fit.TracePlan == nil { // --plan: even when the job fits
			fit.TracePlan = estimate.PlanTrace(t, g, margin, retraces, estimate.DefaultPlanTop)
		}
		if len(tf.combine) > 0 {
			if combined, err = estimate.TraceCombined(t, g, margin, retraces, tf.combine...); err != nil {
				return fmt.Errorf("--combine: %w", err)
			}
		}
		if f.gpuMemory != "" {
			fit.GPUMemoryUnit = memoryUnit(f.gpuMemory)
		}
	} else {
		res = estimate.ReplayTrace(t, estimate.TraceReplay{})
	}
	if tf.snapshot != "" {
		if err := tracerun.WriteSnapshot(tf.snapshot, t, estimate.TraceReplay{ComputeCapability: g.ComputeCapability}); err != nil {
			return err
		}
	}
	if f.json {
		err = writeJSON(env.Stdout, struct {
			*estimate.TraceResult
			*estimate.Fit
			Combined *estimate.TraceCombination `json:"combined,omitempty"`
		}{res, fit, combined})
	} else {
		err = printTrace(env, res, fit, argv, tf.snapshot)
		printTraceCombined(env, fit, combined)
	}
	return traceExit(err, fit, estimate.TracePartial(t, res))
}

// traceAgain traces the program a second time under autocast where the
// amp lever wants it (estimate.AutocastRetrace). Only an interrupt is an
// error: a retrace torchmem could not finish (its timeout) is said on
// stderr, and the report goes on without the lever.
func traceAgain(ctx context.Context, env *Env, o tracerun.Options, t *estimate.Trace) ([]estimate.Retrace, error) {
	dtype := estimate.AutocastRetrace(t, o.GPUCC)
	if dtype == "" {
		return nil, nil
	}
	tt := traceCatalog.T(env.lang())
	fmt.Fprintln(env.Stderr, tt("trace.retrace.amp", dtype))
	// the program's own output once is enough: what stops the retrace is
	// in its report
	o.Autocast, o.Output = dtype, io.Discard
	rt, err := tracerun.Run(ctx, o)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, tt("trace.retrace.failed", termsafe.Line(err.Error())))
		return nil, nil
	}
	return []estimate.Retrace{estimate.AmpRetrace(dtype, rt)}, nil
}

// traceExit is a trace's exit status: 2 when it does not fit, 3 when the
// trace stopped early and what ran fits or no GPU was given (whether the
// job fits, or what it needs, is not known).
func traceExit(err error, fit *estimate.Fit, partial bool) error {
	switch {
	case err != nil:
		return err
	case fit != nil && !fit.Fits:
		return &ExitError{Code: 2}
	case partial:
		return &ExitError{Code: 3}
	}
	return nil
}

func printTrace(env *Env, r *estimate.TraceResult, fit *estimate.Fit, argv []string, snap string) error {
	w := env.Stdout
	lang := env.lang()
	t := estimateCatalog.T(lang)
	tt := traceCatalog.T(lang)
	fmt.Fprintln(w, textwrap.Wrap("", tt("trace.header", shellJoin(argv)), textwrap.Width))
	n := paramCount(r.Params)
	params := tt("trace.params", n)
	switch {
	case r.Distributed.Sharded() && r.Distributed.HostParams > 0:
		params = tt("trace.params.offloaded", n)
	case r.Distributed.Sharded():
		params = tt("trace.params.sharded", n)
	case r.TrainableParams > 0 && r.TrainableParams < r.Params:
		// a frozen base (LoRA, a frozen backbone): what trains is the question
		params = tt("trace.params.trainable", n, groupDigits(r.TrainableParams))
	}
	fmt.Fprintln(w, textwrap.Wrap("  ", tt("trace.setup", r.Device, r.Torch, strconv.Itoa(r.Steps), strconv.Itoa(r.Events), params), textwrap.Width))
	if d := r.Distributed; d != nil && (d.World > 1 || d.Backend != "" || len(d.Wrappers) > 0) {
		// (a launcher's single process with no process group is a plain run)
		fmt.Fprintln(w, textwrap.Wrap("  ", traceDistLine(tt, d), textwrap.Width))
	}
	printAllocConf(w, t, r.Result)
	rows := [][2]string{
		{t("estimate.row.peakAllocated"), units.Bytes(r.PeakAllocatedBytes) + "\t" + t("estimate.note.peakAllocated")},
		{t("estimate.row.peakReserved"), units.Bytes(r.PeakReservedBytes) + "\t" + t("estimate.note.peakReserved")},
		{t("estimate.row.process"), units.Bytes(r.ProcessBytes) + "\t" + t("estimate.note.process")},
	}
	if err := printPeaks(w, t, rows, r.PeakPhase, r.Breakdown, func(name string) string { return traceCategoryLabel(t, tt, name) }); err != nil {
		return err
	}
	printTraceSites(w, t, tt, r.Sites)
	printTraceNotes(w, tt, r)
	if snap != "" {
		fmt.Fprintln(w, "\n"+tt("trace.snapshot", snap))
	}
	if fit != nil {
		printTraceFit(w, t, tt, r, fit)
	}
	return nil
}

// traceDistLine says whose figures these are in a distributed trace.
func traceDistLine(tt tr, d *estimate.TraceDist) string {
	var how []string
	if d.Launcher != "" {
		name, _, _ := strings.Cut(d.Launcher, " ")
		how = append(how, tt("trace.dist.launcher", name))
	}
	how = append(how, d.Wrappers...)
	if d.Backend != "" && d.Backend != "default" {
		how = append(how, tt("trace.dist.backend", d.Backend))
	}
	if d.RankAsked != "" {
		how = append(how, tt("trace.dist.rank", d.RankAsked))
	}
	extra := ""
	if len(how) > 0 {
		extra = " (" + strings.Join(how, ", ") + ")"
	}
	return tt("trace.dist", strconv.Itoa(d.World), extra)
}

func traceCategoryLabel(t, tt tr, name string) string {
	if name == "temporaries" || name == "unused_graph" || name == "torch_load" {
		return tt("trace.cat." + name)
	}
	return categoryLabel(t, name)
}

func printTraceSites(w io.Writer, t, tt tr, sites []estimate.TraceSite) {
	if len(sites) == 0 {
		return
	}
	fmt.Fprintln(w, "\n"+tt("trace.sites"))
	var b strings.Builder
	tw := newTable(&b)
	for _, s := range sites {
		mod := ""
		if s.Module != "" {
			mod = " [" + s.Module + "]"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s%s\n", units.Bytes(s.Bytes), traceCategoryLabel(t, tt, s.Category),
			shortFrame(s.Where), shortOp(s.Op), mod)
	}
	_ = tw.Flush()
	for _, line := range strings.SplitAfter(strings.TrimSuffix(b.String(), "\n"), "\n") {
		fmt.Fprintln(w, fitModule(strings.TrimSuffix(line, "\n"), textwrap.Width))
	}
}

// shortOp: an ATen op as the sites say it, without the namespace and the
// default overload (aten.addmm.default: addmm; aten.mul.Tensor stays
// mul.Tensor).
func shortOp(op string) string {
	return strings.TrimSuffix(strings.TrimPrefix(op, "aten."), ".default")
}

// minModuleShown: the fewest characters of a module's name worth showing
// ("…q_proj"); a site line with less room drops the module.
const minModuleShown = 6

// fitModule shortens the module that ends a site line ([model.layers.3
// .self_attn.q_proj]) from the left, where its name is least telling,
// until the line fits width columns.
func fitModule(line string, width int) string {
	over := utf8.RuneCountInString(line) - width
	i := strings.LastIndex(line, " [")
	if over <= 0 || i < 0 || !strings.HasSuffix(line, "]") {
		return line
	}
	mod := []rune(line[i+2 : len(line)-1])
	keep := len(mod) - over - 1 // one column for "…"
	if keep < minModuleShown {
		return line[:i]
	}
	return line[:i] + " […" + string(mod[len(mod)-keep:]) + "]"
}

// firstFrame: the program's line a note came from (its first frame),
// short; "" when unknown.
func firstFrame(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return shortFrame(where[0])
}

// shortFrame: "dir/file.py:12:fn" as "file.py:12 fn".
func shortFrame(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		s = s[:i] + " " + s[i+1:]
	}
	return s
}

func printTraceNotes(w io.Writer, tt tr, r *estimate.TraceResult) {
	if e := r.End; e != nil && e.Kind != "steps" {
		where := firstFrame(e.Where)
		kind := endKind(e.Kind)
		if kind == "error" && e.Op == "" { // the program's own exception, not an op
			kind = "raised"
		}
		fmt.Fprintln(w, "\n"+textwrap.Wrap("", tt("trace.end."+kind, strconv.Itoa(r.Steps), e.Op, where, e.Message), textwrap.Width))
		if e.WantsMoreGPUs() {
			fmt.Fprintln(w, textwrap.Wrap("", tt("trace.world"), textwrap.Width))
		}
	}
	var reads, shapes, counts, checks, rnns []estimate.TraceNote
	for _, n := range r.Warnings {
		switch n.Kind {
		case "cudnnrnn":
			rnns = append(rnns, n)
		case "datashape":
			shapes = append(shapes, n)
		case "maskcount":
			counts = append(counts, n)
		case "check":
			checks = append(checks, n)
		case "zeroinit", "int8outliers":
			fmt.Fprintln(w, "\n"+textwrap.Wrap("", tt("trace."+n.Kind), textwrap.Width))
		case "compile", "jittrace":
			fmt.Fprintln(w, "\n"+textwrap.Wrap("", tt("trace."+n.Kind, n.Op, firstFrame(n.Where)), textwrap.Width))
		default:
			reads = append(reads, n)
		}
	}
	if n := noteCount(r, shapes); n > 0 {
		where := firstFrame(shapes[0].Where)
		fmt.Fprintln(w, "\n"+textwrap.Wrap("", tt(counted("trace.datashape", n), strconv.Itoa(n), shapes[0].Op, where,
			shapeRules(tt, shapes)), textwrap.Width))
	}
	if n := len(rnns); n > 0 {
		fmt.Fprintln(w, "\n"+textwrap.Wrap("", tt("trace.cudnnrnn", rnns[0].Op, firstFrame(rnns[0].Where), strconv.Itoa(n)), textwrap.Width))
	}
	printNotes(w, tt, "trace.maskcount", counts, noteCount(r, counts))
	printNotes(w, tt, "trace.placeholder", reads, noteCount(r, reads))
	printNotes(w, tt, "trace.check", checks, noteCount(r, checks))
	if u := r.UnusedGraph; u != nil {
		where := shortFrame(u.Caller)
		if u.Caller == "" {
			where = shortFrame(u.Site.Where)
		}
		fmt.Fprintln(w, "\n"+textwrap.Wrap("", tt("trace.unusedGraph", units.Bytes(u.Bytes), where), textwrap.Width))
	}
}

// paramCount: millions (124.4M), or the count itself below
// exactParams, where a tenth of a million would say 0.0M.
func paramCount(n int64) string {
	if n < exactParams {
		return groupDigits(n)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// exactParams: below it a model's parameters are counted one by one.
const exactParams = 100_000

// shapeRules: the rules that sized the notes' ops, those that did only
// (a detector's masks were not sized as a router's).
func shapeRules(tt tr, notes []estimate.TraceNote) string {
	used := map[string]bool{}
	for i := range notes {
		used[notes[i].ShapeRule()] = true
	}
	var out []string
	for _, r := range []string{estimate.ShapeRouter, estimate.ShapeKnown, estimate.ShapeMinLength, estimate.ShapeSampled, estimate.ShapeMost} {
		if used[r] {
			out = append(out, tt("trace.datashape."+r))
		}
	}
	return strings.Join(out, tt("trace.datashape.and"))
}

// printNotes says how many notes of one kind the trace left, naming the first.
func printNotes(w io.Writer, tt tr, key string, notes []estimate.TraceNote, n int) {
	if len(notes) == 0 {
		return
	}
	where := firstFrame(notes[0].Where)
	fmt.Fprintln(w, "\n"+textwrap.Wrap("", tt(counted(key, n), strconv.Itoa(n), notes[0].Op, where), textwrap.Width))
}

// noteCount: how many notes of the kinds in notes the trace made (notes
// has each site once: a note every step repeats is one of them).
func noteCount(r *estimate.TraceResult, notes []estimate.TraceNote) int {
	kinds := map[string]int{}
	for _, n := range notes {
		kinds[n.Kind]++
	}
	total := 0
	for k, n := range kinds {
		total += max(n, r.NoteCounts[k])
	}
	return total
}

// counted: the message key for n of a kind of note, key.one for one
// ("1 value was read", not "1 values were").
func counted(key string, n int) string {
	if n == 1 {
		return key + ".one"
	}
	return key
}

func endKind(k string) string {
	switch k {
	case "error", "exit", "failed", "truncated":
		return k
	}
	return "killed"
}

func printTraceFit(w io.Writer, t, tt tr, r *estimate.TraceResult, f *estimate.Fit) {
	if f.ProgramRefused {
		// the figures of what ran say nothing of the job: the verdict is the program's
		fmt.Fprintf(w, "\n%s\n", fitGPULine(t, f))
		fmt.Fprintln(w, textwrap.Wrap("", tt("trace.fit.refused", firstFrame(r.End.Where)), textwrap.Width))
		return
	}
	if f.Partial && r.Events == 0 {
		// nothing reached the GPU (an import or the setup failed): no
		// figure to fit, and "fits" would say the job does
		fmt.Fprintf(w, "\n%s\n", fitGPULine(t, f))
		fmt.Fprintln(w, textwrap.Wrap("", tt("trace.fit.nothing"), textwrap.Width))
		return
	}
	printFitVerdict(w, t, r.Result, f)
	printFitNotes(w, t, f)
	if f.Partial && f.Fits {
		fmt.Fprintln(w, textwrap.Wrap("", tt("trace.fit.partial", strconv.Itoa(r.Steps)), textwrap.Width))
	}
	printTraceProbe(w, tt, f)
	printStatesNotMade(w, tt, r, f)
	printTraceLevers(w, t, tt, f)
	printRetracesNotOffered(w, tt, r, f)
	printTracePlan(w, t, tt, f)
}

// printTraceProbe: the training steps' need when the peak is in a probe
// before them (AutoBatch's), and whether a program that catches its
// probe's out-of-memory error runs.
func printTraceProbe(w io.Writer, tt tr, f *estimate.Fit) {
	p := f.Probe
	if p == nil {
		return
	}
	key := "trace.probe"
	switch {
	case f.Fits:
	case p.Fits:
		key = "trace.probe.fits"
	default:
		key = "trace.probe.over"
	}
	fmt.Fprintln(w, "\n"+textwrap.Wrap("", tt(key, units.Bytes(p.ProcessBytes), units.Bytes(p.PeakAllocatedBytes),
		units.Bytes(max(p.HeadroomBytes, -p.HeadroomBytes))), textwrap.Width))
}

// printStatesNotMade: the optimizer states the traced steps did not make
// (parameters with no gradient yet: LayerDrop, a branch not taken), and
// the peak once they are; whether the job then fits where it fits now.
func printStatesNotMade(w io.Writer, tt tr, r *estimate.TraceResult, f *estimate.Fit) {
	p := r.StatesNotMade
	if p == nil {
		return
	}
	key := "trace.statesnotmade"
	if f.Fits && f.HeadroomBytes < p.Bytes {
		key = "trace.statesnotmade.over"
	}
	fmt.Fprintln(w, "\n"+textwrap.Wrap("", tt(key, paramCount(p.Params), units.Bytes(p.Bytes),
		units.Bytes(p.PeakAllocatedBytes)), textwrap.Width))
}

// printTraceLevers: the levers, most saved first, with the blocks the
// checkpoint lever checkpoints and how the amp lever was traced.
func printTraceLevers(w io.Writer, t, tt tr, f *estimate.Fit) {
	if len(f.Levers) == 0 {
		return
	}
	// each what-if worded in the output's language (--json keeps the
	// estimate's change, with its details)
	levers := append([]estimate.Lever(nil), f.Levers...)
	for i := range levers {
		levers[i].Change = tt("trace.lever." + levers[i].Lever)
	}
	printLevers(w, t, levers)
	whatIfs := false
	for _, l := range levers {
		if len(l.Modules) > 0 { // the blocks it checkpoints, on a line of their own
			fmt.Fprintln(w, textwrap.Wrap("", tt("trace.lever.modules", l.Lever, strings.Join(l.Modules, ", ")), textwrap.Width))
		}
		if l.Retraced { // how it was traced: the change to make
			fmt.Fprintln(w, textwrap.Wrap("", tt("trace.lever.retraced."+l.Lever, l.Lever), textwrap.Width))
		}
		whatIfs = whatIfs || !l.Retraced
	}
	if whatIfs {
		fmt.Fprintln(w, textwrap.Wrap("", tt("trace.levers.note"), textwrap.Width))
	}
}

// printTraceCombined: --combine's levers replayed together.
func printTraceCombined(env *Env, f *estimate.Fit, c *estimate.TraceCombination) {
	if c == nil {
		return
	}
	t, tt := estimateCatalog.T(env.lang()), traceCatalog.T(env.lang())
	fits := tt("trace.combined.over")
	if c.ProcessBytes <= f.BudgetBytes {
		fits = t("estimate.levers.fits")
	}
	fmt.Fprintln(env.Stdout, "\n"+textwrap.Wrap("", tt("trace.combined", traceLeverLabels(tt, c.Levers, c.Modules),
		units.Bytes(c.ProcessBytes), fits, strconv.FormatFloat(c.Cost, 'f', 2, 64)), textwrap.Width))
}

// traceLeverLabels: levers as the levers' table words them, joined; the
// checkpoint lever with the blocks it checkpoints.
func traceLeverLabels(tt tr, levers, modules []string) string {
	labels := make([]string, len(levers))
	for j, l := range levers {
		labels[j] = tt("trace.lever." + l)
		if l == "checkpoint" && len(modules) > 0 {
			labels[j] += " (" + strings.Join(modules, ", ") + ")"
		}
	}
	return strings.Join(labels, " + ")
}

// printTracePlan: the levers combined that fit, fastest first, each
// worded as in the levers' table.
func printTracePlan(w io.Writer, t, tt tr, f *estimate.Fit) {
	p := f.TracePlan
	if p == nil {
		return
	}
	if len(p.Combinations) == 0 {
		fmt.Fprintln(w, "\n"+textwrap.Wrap("", tt("trace.plan.none", itoa(p.Replayed)), textwrap.Width))
		return
	}
	fmt.Fprintln(w, "\n"+tt("trace.plan.header"))
	for i, c := range p.Combinations {
		fmt.Fprintln(w, t("estimate.plan.row", itoa(i+1), strconv.FormatFloat(c.Cost, 'f', 2, 64), units.Bytes(c.ProcessBytes)))
		fmt.Fprintln(w, textwrap.Wrap("     ", traceLeverLabels(tt, c.Levers, c.Modules), textwrap.Width))
	}
	fmt.Fprintln(w, textwrap.Wrap("", tt("trace.plan.model", itoa(p.Replayed)), textwrap.Width))
}

// printRetracesNotOffered: a lever traced again (amp) that is none: its
// retrace failed under the change (the program is not ready for it, and
// where), or the change saves too little (what it would need: mixed
// precision is not always less).
func printRetracesNotOffered(w io.Writer, tt tr, r *estimate.TraceResult, f *estimate.Fit) {
	for i, n := range f.RetracesNotOffered {
		if i == 0 {
			fmt.Fprintln(w)
		}
		label := tt("trace.lever." + n.Lever)
		if n.End == nil {
			fmt.Fprintln(w, textwrap.Wrap("", tt("trace.retrace.lever.nosaving", label, units.Bytes(n.ProcessBytes), units.Bytes(r.ProcessBytes)), textwrap.Width))
			continue
		}
		where, msg := termsafe.Line(firstFrame(n.End.Where)), termsafe.Line(n.End.Message)
		if n.End.Op != "" {
			msg = termsafe.Line(n.End.Op) + ": " + msg
		}
		fmt.Fprintln(w, textwrap.Wrap("", tt("trace.retrace.lever.failed", label, where, msg), textwrap.Width))
	}
}

var traceEN = map[string]string{
	"trace.header":                    "traced: %[1]s",
	"trace.setup":                     "%[1]s tensors, torch %[2]s, %[3]s optimizer steps, %[4]s allocations and frees, %[5]s",
	"trace.params":                    "%[1]s parameters",
	"trace.params.trainable":          "%[1]s parameters (%[2]s trainable)",
	"trace.params.sharded":            "%[1]s parameters in rank 0's shards",
	"trace.params.offloaded":          "%[1]s parameters in rank 0's shards, kept on the host (CPU offload)",
	"trace.cat.temporaries":           "temporaries",
	"trace.cat.unused_graph":          "unused graph",
	"trace.cat.torch_load":            "torch.load on GPU",
	"trace.unusedGraph":               "%[1]s at the peak was saved by autograd for a backward that never came: a forward ran under grad mode at %[2]s and its graph was dropped unused. If that is evaluation, sampling or a metric, run it under torch.no_grad() (or torch.inference_mode()): autograd saves nothing there",
	"trace.dist":                      "traced as rank 0 of %[1]s%[2]s: the figures are one GPU's; every rank of a data-parallel job holds as much. NCCL's own buffers (outside PyTorch's allocator) are not in them",
	"trace.dist.launcher":             "run as %[1]s's first worker",
	"trace.dist.backend":              "backend %[1]s",
	"trace.dist.rank":                 "asked for rank %[1]s",
	"trace.sites":                     "allocated at the peak by (largest first):",
	"trace.snapshot":                  "memory snapshot written to %[1]s (torchmem snapshot summary FILE, or PyTorch's memory_viz)",
	"trace.end.error":                 "the trace stopped after %[1]s optimizer steps: op %[2]s at %[3]s failed: %[4]s; the figures are those of what ran",
	"trace.end.raised":                "the trace stopped after %[1]s optimizer steps: the program raised at %[3]s: %[4]s; the figures are those of what ran",
	"trace.end.exit":                  "the program ended by itself after %[1]s optimizer steps, before --steps was reached: all of it was traced",
	"trace.end.failed":                "the trace stopped after %[1]s optimizer steps: the program gave up (%[4]s); the figures are those of what ran",
	"trace.end.truncated":             "the trace reached --trace-max-size after %[1]s optimizer steps%[2]s%[3]s: %[4]s; the figures are those of what ran",
	"trace.end.killed":                "the trace is incomplete after %[1]s optimizer steps%[2]s%[3]s: %[4]s",
	"trace.world":                     "the program asked for more GPUs than it was given: under --trace, torch.cuda.device_count() answers --world-size (1 unless given) where no launcher says; trace again with --world-size set to the GPUs the job runs on",
	"trace.fit.refused":               "does not fit: the program read the GPU's free memory (--gpu's) and stopped at %[1]s because the job does not fit in it; trace with a larger --gpu to see what the job needs",
	"trace.fit.nothing":               "nothing was allocated on the GPU before the trace stopped: whether the job fits is not known; fix what stopped it and trace again",
	"trace.statesnotmade":             "%[1]s trainable parameters got no gradient in the traced steps (LayerDrop skips whole layers; a branch the data did not take), so the optimizer made no states for them: %[2]s more once they train, peak allocated %[3]s then (a parameter the program never uses never gets them)",
	"trace.statesnotmade.over":        "%[1]s trainable parameters got no gradient in the traced steps (LayerDrop skips whole layers; a branch the data did not take), so the optimizer made no states for them: %[2]s more once they train, peak allocated %[3]s then, which does not fit (a parameter the program never uses never gets them)",
	"trace.probe":                     "the peak is in a probe before the first optimizer step, which empty_cache() ended (AutoBatch's profiling is one): the training steps after it need %[1]s in nvidia-smi (%[2]s allocated)",
	"trace.probe.fits":                "the peak is in a probe before the first optimizer step, which empty_cache() ended (AutoBatch's profiling is one): the training steps after it need %[1]s in nvidia-smi (%[2]s allocated) and fit, %[3]s to spare. A program that catches CUDA out of memory in its probe, as AutoBatch does, runs; one that does not stops there",
	"trace.probe.over":                "the peak is in a probe before the first optimizer step, which empty_cache() ended (AutoBatch's profiling is one): the training steps after it need %[1]s in nvidia-smi (%[2]s allocated) and do not fit either, %[3]s over",
	"trace.fit.partial":               "but only what ran fits: the trace stopped after %[1]s optimizer steps, and the steps that did not run (the optimizer's states, the next forward) may need more; fix what stopped it and trace again",
	"trace.datashape":                 "%[1]s sizes that depend on the data were assumed (first: %[2]s at %[3]s): %[4]s",
	"trace.datashape.one":             "%[1]s size that depends on the data was assumed (%[2]s at %[3]s): %[4]s",
	"trace.datashape.router":          "one-hot masks and top-k indices (a mixture of experts' router, a one-hot target) give each class a balanced share of the elements",
	"trace.datashape.known":           "a selection from known values each of them",
	"trace.datashape.most":            "a mask all its elements, every box kept, every element distinct: the most each can be",
	"trace.datashape.minlength":       "bincount's values below its minlength (a confusion matrix's n*target+prediction), its output that long",
	"trace.datashape.sampled":         "a sampler's masks (1 put at the sampled indices) as many true elements as indices put, at most",
	"trace.datashape.and":             "; ",
	"trace.maskcount":                 "%[1]s counts of masks without data were taken as all their elements (first: %[2]s at %[3]s): a branch on one takes the path of a mask with true elements, the one that needs the most",
	"trace.maskcount.one":             "%[1]s count of a mask without data was taken as all its elements (%[2]s at %[3]s): a branch on it takes the path of a mask with true elements, the one that needs the most",
	"trace.placeholder":               "%[1]s values were read from tensors without data (first: %[2]s at %[3]s): 0 was used; control flow that depends on them is not traced",
	"trace.placeholder.one":           "%[1]s value was read from a tensor without data (%[2]s at %[3]s): 0 was used; control flow that depends on it is not traced",
	"trace.check":                     "%[1]s checks of the program's own numbers compared tensors without data (first: %[2]s at %[3]s): taken to pass, as on a healthy GPU run",
	"trace.check.one":                 "%[1]s check of the program's own numbers compared tensors without data (%[2]s at %[3]s): taken to pass, as on a healthy GPU run",
	"trace.cudnnrnn":                  "nn.%[1]s at %[2]s (%[3]s recurrent modules trained): on a GPU cuDNN runs each as one kernel that keeps a reserve buffer of cuDNN's own size for backward, which a trace without cuDNN cannot know; it recorded ATen's step-by-step layer instead, so these layers' activations are approximate (--trace --real on a GPU measures them)",
	"trace.compile":                   "%[1]s at %[2]s ran the model eagerly under the tracer: the figures are the eager program's; a compiled one (fused kernels, CUDA graphs) differs",
	"trace.jittrace":                  "torch.jit.%[1]s at %[2]s cannot trace tensors without data: it returned the module as it was given, which then runs eagerly (the same memory); a program that reads the traced graph (TensorBoard's add_graph) gets an error it did not get on a GPU",
	"trace.zeroinit":                  "DeepSpeed ZeRO-3 moved the whole model to the GPU before partitioning it, because the model was not built under deepspeed.zero.Init: every GPU holds all its weights at setup. Build it under zero.Init (with the Trainer: make TrainingArguments(deepspeed=...) before from_pretrained)",
	"trace.int8outliers":              "LLM.int8 (load_in_8bit) keeps each input's outlier columns (above llm_int8_threshold) in fp16 beside the int8 matmul; how many depends on the activations' values, and none were assumed: the real run has a few columns of each input more",
	"trace.lever.8bit-optimizer":      "bitsandbytes 8-bit",
	"trace.lever.fused-optimizer":     "optimizer fused=True",
	"trace.lever.half-batch-accum":    "batch/2, accumulation x2",
	"trace.lever.load-to-host":        "torch.load(map_location=\"cpu\")",
	"trace.lever.checkpoint":          "gradient checkpointing",
	"trace.lever.modules":             "%[1]s: each of %[2]s",
	"trace.lever.grads-to-none":       "zero_grad(set_to_none=True)",
	"trace.lever.expandable-segments": "expandable_segments:True",
	"trace.lever.no-max-split":        "max_split_size_mb removed",
	"trace.lever.no-grad":             "torch.no_grad() there",
	"trace.lever.amp-bf16":            "autocast bf16",
	"trace.lever.amp-fp16":            "autocast fp16 + GradScaler",
	"trace.lever.retraced.amp-bf16":   "%[1]s: traced again, the forward and the loss under torch.autocast(\"cuda\", dtype=torch.bfloat16)",
	"trace.lever.retraced.amp-fp16":   "%[1]s: traced again, the forward and the loss under torch.autocast(\"cuda\", dtype=torch.float16), with torch.cuda.amp.GradScaler",
	"trace.retrace.amp":               "torchmem: the program trains in float32: tracing it again under autocast (%[1]s) for the amp lever (--retrace=false skips this)",
	"trace.retrace.failed":            "torchmem: notice: the trace under autocast did not finish (%[1]s): no amp lever",
	"trace.retrace.lever.failed":      "%[1]s: no lever: under it the program failed at %[2]s: %[3]s",
	"trace.retrace.lever.nosaving":    "%[1]s: no lever: traced again under it, the job needs %[2]s (%[3]s as it is)",
	"trace.plan.header":               "plan: the levers combined that fit, fastest first:",
	"trace.combined":                  "combined (--combine): %[1]s: %[2]s, %[3]s, time %[4]s",
	"trace.combined.over":             "does not fit",
	"trace.plan.none":                 "plan: no combination of the levers fits (%[1]s replayed)",
	"trace.plan.model":                "time: one optimizer step against the job as given = 1.00, by the cost model in docs/estimate.md (%[1]s combinations replayed)",
	"trace.levers.note":               "(what-if replays of this trace, each with the allocations the change alters altered: trace again with the change made to confirm)",
}

var traceZH = map[string]string{
	"trace.header":                    "已追踪：%[1]s",
	"trace.setup":                     "%[1]s 张量，torch %[2]s，%[3]s 个优化器步，%[4]s 次分配与释放，%[5]s",
	"trace.params":                    "%[1]s 参数",
	"trace.params.trainable":          "%[1]s 参数（其中可训练 %[2]s）",
	"trace.params.sharded":            "rank 0 的分片中有 %[1]s 参数",
	"trace.params.offloaded":          "rank 0 的分片中有 %[1]s 参数，放在主机内存（CPU offload）",
	"trace.cat.temporaries":           "临时张量",
	"trace.cat.unused_graph":          "未使用的计算图",
	"trace.cat.torch_load":            "torch.load 到 GPU",
	"trace.unusedGraph":               "峰值时有 %[1]s 是 autograd 为一次从未发生的反向传播保存的：%[2]s 处的前向在梯度模式下运行，其计算图未被使用就被丢弃。如果这是评估、采样或计算指标，请放在 torch.no_grad()（或 torch.inference_mode()）之下：那里 autograd 不保存任何张量",
	"trace.dist":                      "按 %[1]s 个 rank 中的 rank 0 追踪%[2]s：数字是单块 GPU 的；数据并行作业的每个 rank 占用相同。NCCL 自身的缓冲区（不在 PyTorch 分配器中）不包括在内",
	"trace.dist.launcher":             "作为 %[1]s 的第一个工作进程运行",
	"trace.dist.backend":              "后端 %[1]s",
	"trace.dist.rank":                 "程序要求的是 rank %[1]s",
	"trace.sites":                     "峰值时的分配来源（从大到小）：",
	"trace.snapshot":                  "内存快照已写入 %[1]s（torchmem snapshot summary FILE 或 PyTorch 的 memory_viz 可打开）",
	"trace.end.error":                 "追踪在 %[1]s 个优化器步后停止：%[3]s 处的算子 %[2]s 失败：%[4]s；数字是已运行部分的",
	"trace.end.raised":                "追踪在 %[1]s 个优化器步后停止：程序在 %[3]s 处抛出异常：%[4]s；数字是已运行部分的",
	"trace.end.exit":                  "程序在 %[1]s 个优化器步后自行结束，未达到 --steps：它运行的全部内容都已追踪",
	"trace.end.failed":                "追踪在 %[1]s 个优化器步后停止：程序自行退出（%[4]s）；数字是已运行部分的",
	"trace.end.truncated":             "追踪在 %[1]s 个优化器步后达到 --trace-max-size%[2]s%[3]s：%[4]s；数字是已运行部分的",
	"trace.end.killed":                "追踪在 %[1]s 个优化器步后不完整%[2]s%[3]s：%[4]s",
	"trace.world":                     "程序要求的 GPU 比它得到的多：在 --trace 下，没有启动器说明时 torch.cuda.device_count() 返回 --world-size（未给出时为 1）；请把 --world-size 设为作业所用的 GPU 数后重新追踪",
	"trace.fit.refused":               "放不下：程序读取了 GPU 的可用显存（--gpu 所指定的），因作业放不下而在 %[1]s 处停止；请用更大的 --gpu 重新追踪，以查看作业所需",
	"trace.fit.nothing":               "追踪停止前没有在 GPU 上分配任何内存：无法判断任务能否放下；请修复导致停止的问题后重新追踪",
	"trace.statesnotmade":             "%[1]s 个可训练参数在追踪的几步中没有得到梯度（LayerDrop 会整层跳过；数据没走到的分支），优化器尚未为它们创建状态：它们开始训练后还需 %[2]s，届时已分配峰值为 %[3]s（程序从不使用的参数永远不会有状态）",
	"trace.statesnotmade.over":        "%[1]s 个可训练参数在追踪的几步中没有得到梯度（LayerDrop 会整层跳过；数据没走到的分支），优化器尚未为它们创建状态：它们开始训练后还需 %[2]s，届时已分配峰值为 %[3]s，放不下（程序从不使用的参数永远不会有状态）",
	"trace.probe":                     "峰值出现在第一个优化器步之前、以 empty_cache() 结束的一段探测中（AutoBatch 的测算即是）：其后的训练步需要 nvidia-smi 显示 %[1]s（已分配 %[2]s）",
	"trace.probe.fits":                "峰值出现在第一个优化器步之前、以 empty_cache() 结束的一段探测中（AutoBatch 的测算即是）：其后的训练步需要 nvidia-smi 显示 %[1]s（已分配 %[2]s），放得下，剩余 %[3]s。探测中捕获 CUDA 显存不足的程序（AutoBatch 就会）能继续运行；不捕获的程序会在那里停止",
	"trace.probe.over":                "峰值出现在第一个优化器步之前、以 empty_cache() 结束的一段探测中（AutoBatch 的测算即是）：其后的训练步需要 nvidia-smi 显示 %[1]s（已分配 %[2]s），同样放不下，超出 %[3]s",
	"trace.fit.partial":               "但这只是已运行部分能放下：追踪在 %[1]s 个优化器步后停止，未运行的步骤（优化器状态、下一次前向）可能需要更多；请修复导致停止的问题后重新追踪",
	"trace.datashape":                 "假定了 %[1]s 个取决于数据的大小（首个：%[3]s 处的 %[2]s）：%[4]s",
	"trace.datashape.one":             "假定了 %[1]s 个取决于数据的大小（%[3]s 处的 %[2]s）：%[4]s",
	"trace.datashape.router":          "one-hot 掩码与 top-k 索引（专家混合的路由、one-hot 目标）按均衡方式为每个类别分配元素",
	"trace.datashape.known":           "取自已知值的选择按每个值均分",
	"trace.datashape.most":            "掩码取其全部元素，框全部保留，元素互不相同：各取其最大可能",
	"trace.datashape.minlength":       "bincount 的值小于其 minlength（混淆矩阵的 n*target+prediction），输出即为该长度",
	"trace.datashape.sampled":         "采样器的掩码（在采样索引处置 1）的真值个数最多为放入的索引数",
	"trace.datashape.and":             "；",
	"trace.maskcount":                 "%[1]s 次对无数据掩码的计数按全部元素为真处理（首个：%[3]s 处的 %[2]s）：依赖它的分支走掩码有真元素的路径，即需要显存最多的路径",
	"trace.maskcount.one":             "%[1]s 次对无数据掩码的计数按全部元素为真处理（%[3]s 处的 %[2]s）：依赖它的分支走掩码有真元素的路径，即需要显存最多的路径",
	"trace.placeholder":               "从无数据的张量读取了 %[1]s 个值（首个：%[3]s 处的 %[2]s）：以 0 代替；依赖这些值的控制流未被追踪",
	"trace.placeholder.one":           "从无数据的张量读取了 %[1]s 个值（%[3]s 处的 %[2]s）：以 0 代替；依赖该值的控制流未被追踪",
	"trace.check":                     "程序对自身数值的 %[1]s 次检查比较了无数据的张量（首个：%[3]s 处的 %[2]s）：按检查通过处理，如同正常的 GPU 运行",
	"trace.check.one":                 "程序对自身数值的 %[1]s 次检查比较了无数据的张量（%[3]s 处的 %[2]s）：按检查通过处理，如同正常的 GPU 运行",
	"trace.cudnnrnn":                  "%[2]s 处的 nn.%[1]s（共训练 %[3]s 个循环模块）：在 GPU 上 cuDNN 把每层作为一个内核运行，并为反向传播保留一块大小由 cuDNN 决定的 reserve 缓冲区，没有 cuDNN 的追踪无法得知；这里记录的是 ATen 逐时间步的实现，所以这些层的激活是近似值（在 GPU 上用 --trace --real 可实测）",
	"trace.compile":                   "%[2]s 处的 %[1]s 在追踪时以 eager 方式运行模型：数字是 eager 程序的；编译后的程序（融合内核、CUDA graphs）会不同",
	"trace.jittrace":                  "%[2]s 处的 torch.jit.%[1]s 无法追踪没有数据的张量：它原样返回了传入的模块，之后以 eager 方式运行（显存相同）；读取追踪图的程序（TensorBoard 的 add_graph）会得到一个在 GPU 上不会出现的错误",
	"trace.zeroinit":                  "DeepSpeed ZeRO-3 在切分模型之前把整个模型搬到了 GPU 上，因为模型不是在 deepspeed.zero.Init 下构建的：初始化时每块 GPU 都持有全部权重。请在 zero.Init 下构建模型（用 Trainer 时：先创建 TrainingArguments(deepspeed=...) 再调用 from_pretrained）",
	"trace.int8outliers":              "LLM.int8（load_in_8bit）在 int8 矩阵乘之外以 fp16 保留每个输入的离群列（超过 llm_int8_threshold）；其数量取决于激活值，这里假定为零：实际运行时每个输入多出若干列",
	"trace.lever.8bit-optimizer":      "bitsandbytes 8 位优化器",
	"trace.lever.fused-optimizer":     "优化器 fused=True",
	"trace.lever.half-batch-accum":    "批大小减半、梯度累积加倍",
	"trace.lever.load-to-host":        "torch.load(map_location=\"cpu\")（加载到内存）",
	"trace.lever.checkpoint":          "梯度检查点",
	"trace.lever.modules":             "%[1]s：%[2]s 的每一个",
	"trace.lever.grads-to-none":       "zero_grad(set_to_none=True)（梯度置为 None）",
	"trace.lever.expandable-segments": "expandable_segments:True（可扩展段）",
	"trace.lever.no-max-split":        "去掉 max_split_size_mb",
	"trace.lever.no-grad":             "在那里使用 torch.no_grad()",
	"trace.lever.amp-bf16":            "autocast bf16 混合精度",
	"trace.lever.amp-fp16":            "autocast fp16 混合精度 + GradScaler",
	"trace.lever.retraced.amp-bf16":   "%[1]s：已重新追踪，前向与 loss 置于 torch.autocast(\"cuda\", dtype=torch.bfloat16) 之下",
	"trace.lever.retraced.amp-fp16":   "%[1]s：已重新追踪，前向与 loss 置于 torch.autocast(\"cuda\", dtype=torch.float16) 之下，并使用 torch.cuda.amp.GradScaler",
	"trace.retrace.amp":               "torchmem: 程序以 float32 训练：在 autocast（%[1]s）下再追踪一次，以给出混合精度的选项（--retrace=false 可跳过）",
	"trace.retrace.failed":            "torchmem: 提示：autocast 下的追踪未能完成（%[1]s）：没有混合精度选项",
	"trace.retrace.lever.failed":      "%[1]s：不可用：在它之下程序于 %[2]s 处失败：%[3]s",
	"trace.retrace.lever.nosaving":    "%[1]s：不可用：在它之下重新追踪，作业需要 %[2]s（现状为 %[3]s）",
	"trace.plan.header":               "方案：能放下的手段组合，按速度排序：",
	"trace.combined":                  "组合（--combine）：%[1]s：%[2]s，%[3]s，时间 %[4]s",
	"trace.combined.over":             "放不下",
	"trace.plan.none":                 "方案：没有能放下的手段组合（已重放 %[1]s 个）",
	"trace.plan.model":                "时间：以原作业的一个优化器步 = 1.00，按 docs/estimate.md 中的成本模型计（已重放 %[1]s 个组合）",
	"trace.levers.note":               "（以上为对本次追踪的假设重放：按该改动调整相应的分配；请改动后重新追踪以确认）",
}

var traceCatalog = i18n.NewCatalog("estimate-trace", map[language.Tag]map[string]string{
	i18n.EN: traceEN,
	i18n.ZH: traceZH,
})
