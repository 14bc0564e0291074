package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/textwrap"
	"github.com/torchmem/torchmem/internal/units"
)

// tr renders one message of the estimate catalog. Numbers are passed as
// strings (itoa): the message printer would group their digits by locale,
// and a count must read as the flag that set it (--seq 4096).
type tr = func(id string, args ...any) string

func itoa(n int) string { return strconv.Itoa(n) }

func printEstimate(env *Env, r *estimate.Result, f *estimate.Fit) error {
	w := env.Stdout
	t := estimateCatalog.T(env.lang())
	// Model and setup on two lines, and the phase of the peak outside the
	// table (it is longer than any size), keep the text within 80 columns.
	fmt.Fprintf(w, "%s\n  %s\n  %s\n", t("estimate.header", r.Model, r.Family, fmt.Sprintf("%.1fM", float64(r.Params)/1e6)),
		estimateSetup(t, r.Opts, r.Family), effectiveBatch(t, r.Opts))
	rows := [][2]string{
		{t("estimate.row.peakAllocated"), units.Bytes(r.PeakAllocatedBytes) + "\t" + t("estimate.note.peakAllocated")},
		{t("estimate.row.peakReserved"), units.Bytes(r.PeakReservedBytes) + "\t" + t("estimate.note.peakReserved")},
		{t("estimate.row.process"), units.Bytes(r.ProcessBytes) + "\t" + t("estimate.note.process")},
	}
	if r.ActivationBytesPerBlock > 0 {
		rows = append(rows, [2]string{t("estimate.row.perBlock"), units.Bytes(r.ActivationBytesPerBlock) + "\t" + t("estimate.note.perBlock")})
	}
	if r.HostOffloadBytes > 0 {
		rows = append(rows, [2]string{t("estimate.row.hostOffload"), units.Bytes(r.HostOffloadBytes) + "\t" + t("estimate.note.hostOffload")})
	}
	rows = append(rows, peftRows(t, r)...)
	rows = append(rows, moeRows(t, r)...)
	printAllocConf(w, t, r)
	if err := printPeaks(w, t, rows, r.PeakPhase, r.Breakdown, func(name string) string { return categoryLabel(t, name) }); err != nil {
		return err
	}
	if f != nil {
		printFit(w, t, r, f)
	}
	return nil
}

// categoryLabel is a breakdown row's name in the reader's language; a
// category the catalog does not know yet reads as its JSON name.
func categoryLabel(t tr, name string) string {
	id := "estimate.cat." + name
	if s := t(id); s != id {
		return s
	}
	return strings.ReplaceAll(name, "_", " ")
}

func estimateSetup(t tr, o estimate.Options, family string) string {
	var parts []string
	if o.Seq > 0 {
		parts = append(parts, t("estimate.setup.batchSeq", itoa(o.Batch), itoa(o.Seq)))
	} else {
		parts = append(parts, t("estimate.setup.batchImage", itoa(o.Batch), itoa(o.ImageSize)))
	}
	parts = append(parts, o.Precision)
	if o.Inference {
		switch {
		case o.GenLen > 0:
			parts = append(parts, t("estimate.setup.generating", itoa(o.GenLen)))
		case o.KVCache:
			parts = append(parts, t("estimate.setup.kvCache"))
		default:
			parts = append(parts, t("estimate.setup.inference"))
		}
	} else {
		parts = append(parts, t("estimate.setup.optimizer", o.Optimizer, o.OptimizerImpl))
		if o.Accum > 1 {
			parts = append(parts, t("estimate.setup.accum", itoa(o.Accum)))
		}
		if o.Checkpointing {
			id := "estimate.setup.ckpt"
			if o.PEFT.NonReentrant {
				id = "estimate.setup.ckptNonReen"
			}
			parts = append(parts, t(id))
		}
		switch {
		case o.FSDP: // asked as --fsdp: said as FSDP, not as the ZeRO stage it shares
			parts = append(parts, t("estimate.setup.fsdp", itoa(o.WorldSize)))
			if o.FSDPOffload {
				parts = append(parts, t("estimate.setup.fsdpOffload"))
			}
		case o.ZeroStage > 0:
			parts = append(parts, t("estimate.setup.zero", itoa(o.ZeroStage), itoa(o.WorldSize)))
		}
		if o.DDP {
			id := "estimate.setup.ddp"
			if o.DDPBucketView {
				id = "estimate.setup.ddpView"
			}
			parts = append(parts, t(id))
		}
	}
	parts = append(parts, peftSetup(t, o)...)
	if estimate.HasAttention(family) { // a ConvNet has no attention to name
		parts = append(parts, t("estimate.setup.attention", o.Attention))
	}
	if o.Transformers != "" {
		parts = append(parts, t("estimate.setup.transformers", o.Transformers))
	}
	return wrapSetup(t, parts)
}

// printPeaks prints the figure rows (label, value and note), the phase of
// the peak under them, and the breakdown at the peak with label naming
// each category: the part of the report estimate and estimate --trace
// share.
func printPeaks(w io.Writer, t tr, rows [][2]string, phase string, breakdown []estimate.Item, label func(string) string) error {
	tw := newTable(w)
	width := 0
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
		width = max(width, i18n.Width(row[0]))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s%s\n", i18n.PadRight(t("estimate.peakAt"), width+2), phaseLabel(t, phase))
	fmt.Fprintln(w, "\n"+t("estimate.breakdown"))
	tw = newTable(w)
	for _, it := range breakdown {
		fmt.Fprintf(tw, "  %s\t%s\n", label(it.Name), units.Bytes(it.Bytes))
	}
	return tw.Flush()
}

// printFitVerdict prints the GPU, its budget and whether the peak fits:
// the fit lines estimate and estimate --trace share.
func printFitVerdict(w io.Writer, t tr, r *estimate.Result, f *estimate.Fit) {
	verdict := t("estimate.fit.fits", units.Bytes(f.HeadroomBytes))
	switch oom := r.OOM; {
	case oom && f.Cap != nil:
		verdict = t("estimate.fit.capOOM", units.Bytes(r.PeakReservedBytes), units.Bytes(f.Cap.Bytes))
	case oom && f.OOMInMarginOnly:
		verdict = t("estimate.fit.marginOnly", units.Bytes(-f.HeadroomBytes), units.Bytes(f.GPUMemoryBytes-r.ProcessBytes))
	case oom:
		verdict = t("estimate.fit.oom", units.Bytes(-f.HeadroomBytes))
	case !f.Fits:
		verdict = t("estimate.fit.over", units.Bytes(-f.HeadroomBytes))
	}
	fmt.Fprintf(w, "\n%s\n", fitGPULine(t, f))
	if c := f.Cap; c != nil {
		fmt.Fprintln(w, textwrap.Wrap("", t("estimate.fit.cap", units.Bytes(c.Bytes),
			strconv.FormatFloat(100*c.Fraction, 'f', -1, 64), c.Source), textwrap.Width))
	}
	fmt.Fprintln(w, verdict)
}

// printAllocConf: the allocator's options the replay followed, when not
// PyTorch's defaults.
func printAllocConf(w io.Writer, t tr, r *estimate.Result) {
	if r.AllocConf != "" {
		fmt.Fprintln(w, textwrap.Wrap("  ", t("estimate.allocConf", r.AllocConf), textwrap.Width))
	}
	if r.GCIdle != "" {
		fmt.Fprintln(w, textwrap.Wrap("  ", t("estimate.gcIdle."+r.GCIdle), textwrap.Width))
	}
	if r.Collections > 0 {
		fmt.Fprintln(w, textwrap.Wrap("  ", t("estimate.gcCollections", itoa(r.Collections)), textwrap.Width))
	}
}

// fitGPULine: the GPU, its memory and the budget the margin leaves.
func fitGPULine(t tr, f *estimate.Fit) string {
	return t("estimate.fit.gpu", f.GPU, units.Bytes(f.GPUMemoryBytes), units.Bytes(f.BudgetBytes),
		strconv.FormatFloat(100*f.Margin, 'f', 0, 64))
}

func printFit(w io.Writer, t tr, r *estimate.Result, f *estimate.Fit) {
	printFitVerdict(w, t, r, f)
	printFitNotes(w, t, f)
	switch {
	case f.MaxBatchAtLimit:
		fmt.Fprintln(w, t("estimate.fit.maxBatchLimit", itoa(f.MaxBatch)))
	case f.MaxBatch > 0:
		fmt.Fprintln(w, t("estimate.fit.maxBatch", itoa(f.MaxBatch)))
	default:
		fmt.Fprintln(w, t("estimate.fit.maxBatchNone"))
	}
	printLevers(w, t, f.Levers)
}

// printFitNotes: the fit's notes, each worded in the output's language
// when every note has its kind.
func printFitNotes(w io.Writer, t tr, f *estimate.Fit) {
	for i, n := range f.Notes {
		if len(f.NoteKinds) == len(f.Notes) {
			n = fitNote(t, f.NoteKinds[i])
		}
		fmt.Fprintln(w, textwrap.Wrap(t("estimate.fit.note"), n, textwrap.Width))
	}
}

// printLevers: the levers that save memory, most first, one row each.
func printLevers(w io.Writer, t tr, levers []estimate.Lever) {
	if len(levers) == 0 {
		return
	}
	fmt.Fprintln(w, "\n"+t("estimate.levers"))
	tw := newTable(w)
	for _, l := range levers {
		fits := ""
		if l.Fits {
			fits = t("estimate.levers.fits")
		}
		// The flags only: the parenthesised explanation is in --json, and
		// without it a row fits 80 columns.
		flags, _, _ := strings.Cut(l.Change, " (")
		fmt.Fprintf(tw, "  %s\t-%s\t-> %s\t%s\t%s\n", l.Lever, units.Bytes(l.SavedBytes), units.Bytes(l.ProcessBytes), fits, flags)
	}
	_ = tw.Flush()
}

// fitNote words one of the estimate package's fit notes in the output's
// language.
func fitNote(t tr, n estimate.Note) string {
	args := make([]any, len(n.Args))
	for i, a := range n.Args {
		args[i] = itoa(a)
	}
	return t("estimate.note."+n.Kind, args...)
}
