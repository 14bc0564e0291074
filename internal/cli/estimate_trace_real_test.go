package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/snapshot"
	"github.com/torchmem/torchmem/internal/tracerun"
)

func TestTraceRealCatalogComplete(t *testing.T) {
	if m := traceRealCatalog.Missing(); len(m) > 0 {
		t.Errorf("messages missing a translation: %v", m)
	}
}

// TestEstimateTraceRealNeedsCUDA: on a host whose torch sees no CUDA GPU
// (this one: torch 1.13 CPU), --real ends at torch's import with one line
// that says so, and a non-zero exit; under torchrun too, once its worker
// runs in the launcher's place (a world of one), and a world of two is
// refused saying how to measure it.
func TestEstimateTraceRealNeedsCUDA(t *testing.T) {
	skipTraceShort(t)
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import torch, sys; sys.exit(torch.cuda.is_available())").Run() != nil {
		t.Skip("needs /usr/bin/python3 with a torch that sees no CUDA GPU")
	}
	script := filepath.Join("..", "tracerun", "testdata", "mlp.py")
	out, errOut, code := runCLI(t, "estimate", "--trace", "--real", "--json", "--", py, script)
	want := "--real needs a CUDA GPU: torch.cuda.is_available() is False on this host"
	if code == 0 || out != "" || !strings.Contains(errOut, want) {
		t.Errorf("code %d, stdout %q, stderr %q: want a non-zero exit and %q", code, out, errOut, want)
	}
	if strings.Contains(errOut, "Traceback") || strings.Contains(errOut, "step 0 loss") {
		t.Errorf("the program should not have run: %q", errOut)
	}
	// under torchrun, --real measures a world of one (the launcher's worker
	// is run in its place); more ranks would wait for the others
	ddp := filepath.Join("..", "tracerun", "testdata", "ddp_train.py")
	_, errOut, code = runCLI(t, "estimate", "--trace", "--real", "--", py, "-m", "torch.distributed.run", "--nproc_per_node", "2", ddp)
	if code == 0 || !strings.Contains(errOut, "a world of 2 needs all its ranks") || !strings.Contains(errOut, "--nproc-per-node 1") {
		t.Errorf("--real under torchrun with 2 workers: code %d, stderr %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "estimate", "--trace", "--real", "--", py, "-m", "torch.distributed.run", "--nproc_per_node", "1", ddp)
	if code == 0 || !strings.Contains(errOut, want) {
		t.Errorf("--real under torchrun with 1 worker: code %d, stderr %q: want the worker's own answer %q", code, errOut, want)
	}
	if _, errOut, code := runCLI(t, "estimate", "--real", "--model", "gpt2"); code == 0 || !strings.Contains(errOut, "--real goes with --trace") {
		t.Errorf("--real without --trace: code %d %q", code, errOut)
	}
}

// realGPT2 is the report of the real GPT-2 run of tracerun's testdata.
func realGPT2(t *testing.T) *tracerun.Real {
	t.Helper()
	dir := filepath.Join("..", "tracerun", "testdata", "real")
	s, err := snapshot.ReadFile(filepath.Join(dir, "train_gpt2_bf16.pickle.gz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "memory_stats_train.json"))
	if err != nil {
		t.Fatal(err)
	}
	st := &tracerun.RealStats{Torch: "2.11.0+cu130", Steps: 4}
	if err := json.Unmarshal(b, &st.MemoryStats); err != nil {
		t.Fatal(err)
	}
	return tracerun.Measure(st, s, tracerun.ProcessPeak{Notice: "no NVIDIA GPU: test"}, &estimate.TraceNote{Kind: "steps"})
}

// TestPrintTraceReal: the measured report says measured, lists the
// breakdown and sites of the trace's peak and the notice of what was not
// measured, in English and in Chinese.
func TestPrintTraceReal(t *testing.T) {
	r := realGPT2(t)
	r.GPUName = "NVIDIA H200"
	fit, err := estimate.FitMeasured(r.Result, estimate.GPU{Name: "NVIDIA H200", MemoryBytes: 150754820096}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := printTraceReal(&Env{Stdout: &out}, r, fit, []string{"python", "train.py"}, ""); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"run on the GPU: python train.py", "NVIDIA H200, torch 2.11.0+cu130, 4 optimizer steps, 17575 allocator events",
		"3.10 GiB", "measured: torch.cuda.max_memory_allocated()", "not measured (no NVML)", "allocator rounding",
		"capture_torch.py:75 train_with_history", "nvidia-smi's figure is modelled: no NVIDIA GPU: test", "NVIDIA H200"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	out.Reset()
	if err := printTraceReal(&Env{Stdout: &out, Lang: "zh"}, r, fit, []string{"python", "train.py"}, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "在 GPU 上实际运行") || !strings.Contains(out.String(), "实测：") {
		t.Errorf("zh:\n%s", out.String())
	}
}
