package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/i18n"
	"golang.org/x/text/language"
)

// skipTraceShort: the --trace tests run a real Python program under torch;
// go test -short leaves them to the full suite.
func skipTraceShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: traces a real Python program (the full suite runs it)")
	}
}

// systemTorch is Debian's python3 with its torch (the suite's), or skips.
func systemTorch(t *testing.T) string {
	t.Helper()
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import torch").Run() != nil {
		t.Skip("no /usr/bin/python3 with torch (apt install python3-torch)")
	}
	return py
}

func TestTraceCatalogComplete(t *testing.T) {
	if m := traceCatalog.Missing(); len(m) > 0 {
		t.Errorf("messages missing a translation: %v", m)
	}
}

// TestEstimateTraceCLI: --trace on the MLP of internal/tracerun/testdata
// gives a report, --json the same figures, and --snapshot a pickle that
// `torchmem snapshot summary` opens with the predicted peak.
func TestEstimateTraceCLI(t *testing.T) {
	skipTraceShort(t)
	py := systemTorch(t)
	script := filepath.Join("..", "tracerun", "testdata", "mlp.py")
	snap := filepath.Join(t.TempDir(), "pred.pickle")
	out, errOut, code := runCLI(t, "estimate", "--trace", "--json", "--gpu", "A100-80GB", "--snapshot", snap, "--", py, script)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	var r struct {
		PeakAllocated int64  `json:"peak_allocated_bytes"`
		PeakReserved  int64  `json:"peak_reserved_bytes"`
		LivePeak      int64  `json:"live_bytes_peak"`
		Steps         int    `json:"trace_steps"`
		Fits          bool   `json:"fits"`
		Device        string `json:"trace_device"`
		Sites         []struct {
			Where string `json:"where"`
		} `json:"top_sites_at_peak"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Steps != 2 || !r.Fits || r.Device != "meta" || r.PeakAllocated <= 0 || r.PeakReserved < r.PeakAllocated ||
		len(r.Sites) == 0 || !strings.Contains(r.Sites[0].Where, "mlp.py:") {
		t.Errorf("unexpected result: %+v", r)
	}
	if !strings.Contains(errOut, "step 0 loss") {
		t.Errorf("the program's own output should reach stderr: %q", errOut)
	}
	sum, errOut, code := runCLI(t, "snapshot", "summary", "--json", snap)
	if code != 0 {
		t.Fatalf("snapshot summary: code %d: %s", code, errOut)
	}
	// The snapshot's own history replayed by `snapshot summary` reaches
	// the reserved peak the estimate reports. Its allocated peak counts
	// what the program asked for, as PyTorch's trace entries do, so it
	// lies between the live tensors' peak and the blocks' (which round
	// each request up).
	var sm struct {
		Traces []struct {
			PeakAllocated struct {
				Allocated int64 `json:"allocated_bytes"`
			} `json:"peak_allocated"`
			PeakReserved struct {
				Reserved int64 `json:"reserved_bytes"`
			} `json:"peak_reserved"`
		} `json:"traces"`
	}
	if err := json.Unmarshal([]byte(sum), &sm); err != nil || len(sm.Traces) != 1 {
		t.Fatalf("snapshot summary: %v\n%s", err, sum)
	}
	if p := sm.Traces[0]; p.PeakReserved.Reserved != r.PeakReserved ||
		p.PeakAllocated.Allocated < r.LivePeak || p.PeakAllocated.Allocated > r.PeakAllocated {
		t.Errorf("snapshot summary: peak reserved %d, allocated %d; the estimate's %d, and live %d to blocks %d",
			p.PeakReserved.Reserved, p.PeakAllocated.Allocated, r.PeakReserved, r.LivePeak, r.PeakAllocated)
	}
	text, _, code := runCLI(t, "estimate", "--trace", "--", py, script)
	if code != 0 || !strings.Contains(text, "peak allocated") || !strings.Contains(text, "allocated at the peak by") {
		t.Errorf("text report (code %d):\n%s", code, text)
	}
	if _, errOut, code := runCLI(t, "estimate", "--steps", "3", "--model", "gpt2"); code == 0 || !strings.Contains(errOut, "--steps goes with --trace") {
		t.Errorf("--steps without --trace: code %d %q", code, errOut)
	}
}

// TestEstimateTraceLevers: a trace's levers (what-if replays) reach
// --json with the estimate's change and the text report in the output's
// language, with the note that they are what-ifs: GPT-2 of 4 layers at
// GPT-2 small's width, batch 8 x 256, foreach AdamW, on an A10.
func TestEstimateTraceLevers(t *testing.T) {
	skipTraceShort(t)
	py := systemTorch(t)
	args := []string{"--gpu", "A10", "--", py, filepath.Join("..", "tracerun", "testdata", "gpt2.py"),
		"4", "768", "12", "50257", "8", "256", "foreach"}
	js, errOut, code := runCLI(t, append([]string{"estimate", "--trace", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	var r struct {
		Process int64            `json:"process_bytes"`
		Levers  []estimate.Lever `json:"levers"`
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	names := map[string]estimate.Lever{}
	for _, l := range r.Levers {
		names[l.Lever] = l
		if l.SavedBytes <= 0 || l.ProcessBytes+l.SavedBytes != r.Process || l.Change == "" {
			t.Errorf("lever %+v against process %d", l, r.Process)
		}
	}
	if _, ok := names["half-batch-accum"]; !ok {
		t.Errorf("no half-batch-accum lever: %+v", r.Levers)
	}
	if c := names["checkpoint"]; len(c.Modules) != 1 || c.Modules[0] != "h.N" {
		t.Errorf("checkpoint lever %+v, want one of h.N's blocks", c)
	}
	// the script trains in float32: traced again under autocast, said on stderr
	if a := names["amp-bf16"]; !a.Retraced || !strings.Contains(errOut, "tracing it again under autocast (bfloat16)") {
		t.Errorf("amp lever %+v, stderr %q: want a retraced amp-bf16", a, errOut)
	}
	for _, l := range r.Levers {
		if l.Retraced != (l.Lever == "amp-bf16") {
			t.Errorf("lever %s retraced %v", l.Lever, l.Retraced)
		}
	}
	en, _, _ := runCLI(t, append([]string{"estimate", "--trace"}, args...)...)
	if !strings.Contains(en, "gradient checkpointing") || !strings.Contains(en, "\ncheckpoint: each of h.N\n") ||
		!strings.Contains(en, "autocast bf16\n") || !strings.Contains(en, "\namp-bf16: traced again, the forward and the loss under torch.autocast(") {
		t.Errorf("levers:\n%s", en)
	}
	for _, line := range strings.Split(en, "\n") {
		if len([]rune(line)) > 80 {
			t.Errorf("a line of %d columns: %q", len([]rune(line)), line)
		}
	}
	zh, _, _ := runCLI(t, append([]string{"estimate", "--trace", "--lang", "zh"}, args...)...)
	if !strings.Contains(zh, "可节省显存的手段") || !strings.Contains(zh, "批大小减半、梯度累积加倍") || !strings.Contains(zh, "假设重放") ||
		!strings.Contains(zh, "h.N 的每一个") || !strings.Contains(zh, "amp-bf16：已重新追踪") {
		t.Errorf("--lang zh levers:\n%s", zh)
	}
	// --retrace=false: one trace, no amp lever
	off, errOut, code := runCLI(t, append([]string{"estimate", "--trace", "--retrace=false"}, args...)...)
	if code != 0 || strings.Contains(off, "amp-bf16") || strings.Contains(errOut, "again under autocast") {
		t.Errorf("--retrace=false: code %d, stderr %q:\n%s", code, errOut, off)
	}
}

// TestEstimateTraceAmpFailure: a program that trains in float32 and fails
// under autocast (testdata/amp_regions.py's index_add_ of bf16 outputs
// into a float32 buffer) gets no amp lever, and the report says where
// and why.
func TestEstimateTraceAmpFailure(t *testing.T) {
	skipTraceShort(t)
	py := systemTorch(t)
	script := filepath.Join("..", "tracerun", "testdata", "amp_regions.py")
	out, errOut, code := runCLI(t, "estimate", "--trace", "--gpu", "A10", "--", py, script, "indexadd")
	want := "autocast bf16: no lever: under it the program failed at amp_regions.py:"
	if code != 0 || !strings.Contains(strings.ReplaceAll(out, "\n", " "), want) || strings.Contains(out, "amp-bf16 ") {
		t.Errorf("code %d (stderr %q), want %q and no amp lever:\n%s", code, errOut, want, out)
	}
}

// TestEstimateTracePartialFit: a script that fails before its first
// optimizer step fits "so far" only: the report says so, the JSON has
// partial, and the exit status is 3, not 0.
func TestEstimateTracePartialFit(t *testing.T) {
	skipTraceShort(t)
	py := systemTorch(t)
	script := filepath.Join("..", "tracerun", "testdata", "stopsearly.py")
	out, errOut, code := runCLI(t, "estimate", "--trace", "--gpu", "A100-80GB", "--", py, script)
	if code != 3 || !strings.Contains(out, "only what ran fits") || !strings.Contains(out, "stopsearly.py:10") {
		t.Errorf("code %d, want 3 and the partial verdict naming the line:\n%s\n%s", code, out, errOut)
	}
	js, _, code := runCLI(t, "estimate", "--trace", "--json", "--gpu", "A100-80GB", "--", py, script)
	var r struct {
		Fits    bool `json:"fits"`
		Partial bool `json:"partial"`
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil || code != 3 || !r.Fits || !r.Partial {
		t.Errorf("--json: code %d err %v %+v", code, err, r)
	}
}

// TestEstimateTraceNothingRan: a program that fails before anything
// reaches the GPU (an import) is no fit either way: the report says it is
// not known, exit 3, with or without --gpu.
func TestEstimateTraceNothingRan(t *testing.T) {
	skipTraceShort(t)
	py := systemTorch(t)
	script := filepath.Join(t.TempDir(), "imports.py")
	if err := os.WriteFile(script, []byte("import torch\nimport not_a_module_here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "estimate", "--trace", "--gpu", "A100-80GB", "--", py, script)
	flat := strings.ReplaceAll(out, "\n", " ")
	if code != 3 || !strings.Contains(flat, "whether the job fits is not known") || strings.Contains(out, "to spare") {
		t.Errorf("code %d, want 3 and no fit told:\n%s\n%s", code, out, errOut)
	}
	// without --gpu too: a script checking the exit status learns the
	// trace is not the job's (it was 0)
	if _, errOut, code = runCLI(t, "estimate", "--trace", "--", py, script); code != 3 {
		t.Errorf("without --gpu: code %d, want 3\n%s", code, errOut)
	}
}

// TestEstimateTraceProgramRefused: a program that reads the GPU's free
// memory and refuses to run (refuses.py needs 40 GiB) does not fit a 24 GB
// --gpu, whatever what ran holds: exit 2, the verdict names the line and
// says to trace with a larger --gpu; on an H200 it runs and fits.
func TestEstimateTraceProgramRefused(t *testing.T) {
	skipTraceShort(t)
	py := systemTorch(t)
	script := filepath.Join("..", "tracerun", "testdata", "refuses.py")
	out, errOut, code := runCLI(t, "estimate", "--trace", "--gpu", "RTX-4090", "--", py, script)
	want := "does not fit: the program read the GPU's free memory (--gpu's) and stopped at\nrefuses.py:9"
	if code != 2 || !strings.Contains(out, want) || strings.Contains(out, "only what ran fits") {
		t.Errorf("code %d, want 2 and %q:\n%s\n%s", code, want, out, errOut)
	}
	js, _, code := runCLI(t, "estimate", "--trace", "--json", "--gpu", "RTX-4090", "--", py, script)
	var r struct {
		Fits    bool `json:"fits"`
		Refused bool `json:"program_refused"`
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil || code != 2 || r.Fits || !r.Refused {
		t.Errorf("--json: code %d err %v %+v", code, err, r)
	}
	out, errOut, code = runCLI(t, "estimate", "--trace", "--gpu", "H200", "--", py, script)
	if code != 0 || !strings.Contains(out, "peak allocated  40.00 GiB") {
		t.Errorf("H200: code %d, want 0 and 40 GiB:\n%s\n%s", code, out, errOut)
	}
}

// TestTraceDistLine: a distributed trace says whose figures they are, in
// both languages: the world, how the rank ran (the launcher it stood in
// for, the wrappers, the backend asked for, a rank asked for).
func TestTraceDistLine(t *testing.T) {
	d := &estimate.TraceDist{World: 8, Backend: "nccl", Launcher: "torchrun 8",
		Wrappers: []string{"DistributedDataParallel"}, RankAsked: "3"}
	en := traceDistLine(traceCatalog.T(i18n.EN), d)
	want := "traced as rank 0 of 8 (run as torchrun's first worker, DistributedDataParallel, backend nccl, asked for rank 3): the figures are one GPU's"
	if !strings.HasPrefix(en, want) || !strings.Contains(en, "NCCL's own buffers") {
		t.Errorf("en: %q", en)
	}
	sharded := func(w string) bool { return (&estimate.TraceDist{World: 4, Wrappers: []string{w}}).Sharded() }
	if !sharded("fully_shard") || !sharded("FullyShardedDataParallel") || sharded("FullyShardedDataParallel NO_SHARD") ||
		d.Sharded() || (*estimate.TraceDist)(nil).Sharded() {
		t.Errorf("Sharded: only FSDP (either, but for NO_SHARD) in a world of several shards the parameters")
	}
	zh := traceDistLine(traceCatalog.T(i18n.ZH), &estimate.TraceDist{World: 2, Backend: "default"})
	if !strings.HasPrefix(zh, "按 2 个 rank 中的 rank 0 追踪：数字是单块 GPU 的") || strings.Contains(zh, "default") {
		t.Errorf("zh: %q", zh)
	}
}

// TestEstimateTraceChecksSaid: a program's own checks of its numbers
// (allclose, equal, isfinite) on tensors without data pass in the trace,
// and the report says how many and where the first was.
func TestEstimateTraceChecksSaid(t *testing.T) {
	skipTraceShort(t)
	py := systemTorch(t)
	script := filepath.Join("..", "tracerun", "testdata", "hostfirst.py")
	out, errOut, code := runCLI(t, "estimate", "--trace", "--gpu", "T4", "--", py, script, "4")
	want := "4 checks of the program's own numbers compared tensors without data (first:\nallclose at hostfirst.py:"
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "2 optimizer steps") {
		t.Errorf("code %d, want 2 steps and %q:\n%s\n%s", code, want, out, errOut)
	}
}

// TestTraceWorldHint: a trace that ended on the program asking for more
// GPUs than it was given (Lightning's device parser, devices=4 traced
// without --world-size) says to trace again with --world-size, in both
// languages; another error does not.
func TestTraceWorldHint(t *testing.T) {
	lightning := &estimate.TraceNote{Kind: "error", Where: []string{"/x/lightning/device_parser.py:136:_sanitize_gpu_ids"},
		Message: "MisconfigurationException: You requested gpu: [0, 1, 2, 3] But your machine only has: [0]"}
	other := &estimate.TraceNote{Kind: "error", Message: "KeyError: 'figure.hooks'"}
	for _, c := range []struct {
		lang language.Tag
		want string
	}{{i18n.EN, "trace again with --world-size set to"}, {i18n.ZH, "请把 --world-size 设为作业所用的 GPU 数"}} {
		var b strings.Builder
		printTraceNotes(&b, traceCatalog.T(c.lang), &estimate.TraceResult{Result: &estimate.Result{}, End: lightning})
		flat := func(s string) string { return strings.Join(strings.Fields(s), "") } // wrapped either way
		if !strings.Contains(flat(b.String()), flat(c.want)) {
			t.Errorf("%v: no --world-size hint:\n%s", c.lang, b.String())
		}
		b.Reset()
		printTraceNotes(&b, traceCatalog.T(c.lang), &estimate.TraceResult{Result: &estimate.Result{}, End: other})
		if strings.Contains(b.String(), "--world-size") {
			t.Errorf("%v: a --world-size hint for another error:\n%s", c.lang, b.String())
		}
	}
}

// TestTraceCuDNNRNNNote: recurrent modules the trace saw trained are
// said once, the first named with the count, in both languages.
func TestTraceCuDNNRNNNote(t *testing.T) {
	rnn := func(op, where string) estimate.TraceNote {
		return estimate.TraceNote{Kind: "cudnnrnn", Op: op, Where: []string{where}}
	}
	r := &estimate.TraceResult{Result: &estimate.Result{}, Warnings: []estimate.TraceNote{
		rnn("LSTM", "/x/models/TextRNN.py:56:forward"), {Kind: "placeholder", Op: "cpu"}, rnn("GRU", "/x/models/dec.py:9:forward")}}
	flat := func(s string) string { return strings.Join(strings.Fields(s), "") }
	for lang, want := range map[language.Tag]string{i18n.EN: "nn.LSTM at TextRNN.py:56 forward (2 recurrent modules trained)",
		i18n.ZH: "TextRNN.py:56 forward 处的 nn.LSTM（共训练 2 个循环模块）"} {
		var b strings.Builder
		printTraceNotes(&b, traceCatalog.T(lang), r)
		if got := b.String(); !strings.Contains(flat(got), flat(want)) || strings.Contains(got, "nn.GRU") {
			t.Errorf("%v: want %q once:\n%s", lang, want, got)
		}
	}
}

// TestFitModule: a site line too wide loses the start of its module's
// name, then the module; a line that fits, or has none, is as it was.
func TestFitModule(t *testing.T) {
	line := "  96.00 MiB   activations       modeling_llama.py:180 forward    mm [model.layers.31.self_attn.q_proj]"
	for _, c := range []struct {
		width int
		want  string
	}{
		{200, line},
		{90, "  96.00 MiB   activations       modeling_llama.py:180 forward    mm […31.self_attn.q_proj]"},
		{80, "  96.00 MiB   activations       modeling_llama.py:180 forward    mm […tn.q_proj]"},
		{75, "  96.00 MiB   activations       modeling_llama.py:180 forward    mm"},
	} {
		got := fitModule(line, c.width)
		if got != c.want || (c.width < 200 && len([]rune(got)) > c.width) {
			t.Errorf("width %d:\n got %q\nwant %q", c.width, got, c.want)
		}
	}
	if got := fitModule("  1.00 MiB  x", 5); got != "  1.00 MiB  x" {
		t.Errorf("a line without a module: %q", got)
	}
}

// TestEstimateTracePlan: a job no lever alone makes fit (testdata/gpt2.py
// in fp32 on 2.5 GiB) gets a plan of levers combined, fastest first, in
// the text and the JSON, in English and Chinese, exit status 2; --plan
// shows one for a job that fits; --plan needs a GPU, and the built-in
// plan's --gpus is refused. --combine replays the levers it names
// together; a name that is no lever is refused before the trace.
func TestEstimateTracePlan(t *testing.T) {
	skipTraceShort(t)
	py := systemTorch(t)
	prog := []string{"--", py, filepath.Join("..", "tracerun", "testdata", "gpt2.py"), "4", "768", "12", "50257", "8", "256", "foreach"}
	small := append([]string{"estimate", "--trace", "--gpu-memory", "2.5GiB"}, prog...)
	out, errOut, code := runCLI(t, small...)
	if code != 2 || !strings.Contains(out, "\nplan: the levers combined that fit, fastest first:\n  1. time ") ||
		!strings.Contains(out, "autocast bf16 + ") || !strings.Contains(out, "combinations replayed)") {
		t.Errorf("code %d (%s):\n%s", code, errOut, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if len([]rune(line)) > 80 {
			t.Errorf("a line of %d columns: %q", len([]rune(line)), line)
		}
	}
	js, _, _ := runCLI(t, append([]string{"estimate", "--trace", "--json", "--gpu-memory", "2.5GiB"}, prog...)...)
	var r struct {
		Budget int64               `json:"budget_bytes"`
		Plan   *estimate.TracePlan `json:"trace_plan"`
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil || r.Plan == nil || len(r.Plan.Combinations) == 0 {
		t.Fatalf("%v: %s", err, js)
	}
	for i, c := range r.Plan.Combinations {
		if c.ProcessBytes > r.Budget || len(c.Levers) == 0 || i > 0 && c.Cost < r.Plan.Combinations[i-1].Cost {
			t.Errorf("combination %d: %+v (budget %d)", i, c, r.Budget)
		}
	}
	zh, _, _ := runCLI(t, append([]string{"estimate", "--trace", "--lang", "zh", "--gpu-memory", "2.5GiB"}, prog...)...)
	if !strings.Contains(zh, "方案：能放下的手段组合，按速度排序：") {
		t.Errorf("--lang zh:\n%s", zh)
	}
	fits, _, code := runCLI(t, append([]string{"estimate", "--trace", "--plan", "--gpu", "A10"}, prog...)...)
	if code != 0 || !strings.Contains(fits, "\nplan: the levers combined that fit") {
		t.Errorf("--plan on an A10: code %d\n%s", code, fits)
	}
	if _, errOut, code := runCLI(t, append([]string{"estimate", "--trace", "--plan"}, prog...)...); code == 0 || !strings.Contains(errOut, "--plan searches what fits a GPU") {
		t.Errorf("--plan without a GPU: code %d, %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, append([]string{"estimate", "--trace", "--gpus", "2", "--gpu", "A10"}, prog...)...); code == 0 || !strings.Contains(errOut, "a trace's plan combines") {
		t.Errorf("--gpus with --trace: code %d, %q", code, errOut)
	}
	// --combine: the levers named, replayed together, fitting or not
	js, _, code = runCLI(t, append([]string{"estimate", "--trace", "--json", "--gpu-memory", "2.5GiB", "--combine", "checkpoint,8bit-optimizer"}, prog...)...)
	var c struct {
		Combined *estimate.TraceCombination `json:"combined"`
	}
	if err := json.Unmarshal([]byte(js), &c); err != nil || c.Combined == nil || strings.Join(c.Combined.Levers, "+") != "checkpoint+8bit-optimizer" ||
		len(c.Combined.Modules) != 1 || c.Combined.Cost < 1.3 {
		t.Errorf("--combine --json: code %d, %+v, %v", code, c.Combined, err)
	}
	text, _, _ := runCLI(t, append([]string{"estimate", "--trace", "--gpu-memory", "2.5GiB", "--combine", "amp-bf16,checkpoint"}, prog...)...)
	if !strings.Contains(strings.ReplaceAll(text, "\n", " "), "combined (--combine): autocast bf16 + gradient checkpointing (h.N): ") {
		t.Errorf("--combine:\n%s", text)
	}
	if _, errOut, code := runCLI(t, append([]string{"estimate", "--trace", "--gpu", "A10", "--combine", "nope"}, prog...)...); code == 0 || !strings.Contains(errOut, `--combine: lever "nope"`) {
		t.Errorf("--combine nope: code %d, %q", code, errOut)
	}
}
