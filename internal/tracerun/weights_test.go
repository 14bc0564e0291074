package tracerun

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
)

// llamaParams: the parameters of testdata/llama.py (untied lm_head, no
// biases, two RMSNorms a layer and a final one).
func llamaParams(layers, h, inter, vocab int64) int64 {
	return layers*(4*h*h+3*h*inter+2*h) + 2*vocab*h + h
}

// paramAllocs: the allocations the trace classified as parameters.
func paramAllocs(tr *estimate.Trace) []estimate.TraceAlloc {
	var out []estimate.TraceAlloc
	for i, s := range estimate.TraceCategorySizes(tr) {
		if strings.HasPrefix(s, estimate.CatWeights.String()+":") && tr.Allocs[i].Kind == "param" {
			out = append(out, tr.Allocs[i])
		}
	}
	return out
}

// TestWeightsNeverAllocated: a Llama of 78 billion parameters (Llama-2-70B's
// widths without GQA: 80 layers, 8192 wide, MLP 28672) built on the host in
// fp32, cast to bf16 there and moved with .cuda() is traced. Its weights
// would need 313 GB if made for real; on meta each parameter is a
// placeholder from the moment it is registered, and the trace still sees
// every weight arrive on the GPU, in bf16, by the copy .cuda() makes.
func TestWeightsNeverAllocated(t *testing.T) {
	py := torchPython(t)
	const layers, h, inter, vocab = 80, 8192, 28672, 32000
	var out strings.Builder
	tr, err := Run(t.Context(), Options{Argv: []string{py, filepath.Join("testdata", "llama.py"),
		itoa(layers), itoa(h), "64", itoa(inter), itoa(vocab), "1", "16", "bf16"}, Steps: 1, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if tr.End == nil || tr.End.Kind != "steps" {
		t.Fatalf("the trace ended with %+v, want 1 optimizer step\n%s", tr.End, out.String())
	}
	var bytes int64
	ps := paramAllocs(tr)
	for _, a := range ps {
		bytes += a.Bytes
		if a.DType != "bfloat16" || !strings.Contains(a.Op, "_to_copy") {
			t.Fatalf("parameter %+v: want a bfloat16 copy made by .cuda()", a)
		}
	}
	want := llamaParams(layers, h, inter, vocab)
	if bytes != 2*want || len(ps) != layers*9+3 {
		t.Errorf("%d parameters, %d B on the GPU: want %d tensors, %d B (bf16)", len(ps), bytes, layers*9+3, 2*want)
	}
}

// TestCheckpointLoadedOnMeta: torch.load of a checkpoint and
// load_state_dict work under the tracer without reading the tensors (each
// storage is a meta storage of its size), and the trace is the one of the
// same script without the checkpoint. The checkpoint has its tensor
// records (data/N) stripped, so a load that read one would fail.
func TestCheckpointLoadedOnMeta(t *testing.T) {
	py := torchPython(t)
	ckpt := filepath.Join(t.TempDir(), "llama.pt")
	save := "import sys, torch, zipfile; sys.path.insert(0, sys.argv[1]); import llama\n" +
		"torch.save(llama.LlamaForCausalLM(2, 64, 4, 172, 100).state_dict(), sys.argv[2] + '.full')\n" +
		"zi, zo = zipfile.ZipFile(sys.argv[2] + '.full'), zipfile.ZipFile(sys.argv[2], 'w')\n" +
		"n = [zo.writestr(i.filename, zi.read(i.filename)) for i in zi.infolist() if '/data/' not in i.filename]\n" +
		"zo.close()\n" +
		"try:\n    torch.load(sys.argv[2])\nexcept RuntimeError:\n    pass\nelse:\n    sys.exit('a stripped checkpoint loaded')"
	if b, err := exec.Command(py, "-c", save, "testdata", ckpt).CombinedOutput(); err != nil {
		t.Fatalf("saving the checkpoint: %v\n%s", err, b)
	}
	args := []string{filepath.Join("testdata", "llama.py"), "2", "64", "4", "172", "100", "2", "16", "fp32"}
	plain := trace(t, py, "meta", args...)
	loaded := trace(t, py, "meta", append(args, ckpt)...)
	a, b := allocations(plain), allocations(loaded)
	if strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("the checkpoint changed the trace:\nwithout %v\nwith    %v", a, b)
	}
	if n := len(paramAllocs(loaded)); n != 2*9+3 {
		t.Errorf("%d parameters on the GPU, want %d", n, 2*9+3)
	}
}

// TestHostModelMetaAgreesWithReal: the Llama built on the host, cast to
// bf16 there and moved, traced with meta placeholders and with real
// tensors, allocates the same on the GPU.
func TestHostModelMetaAgreesWithReal(t *testing.T) {
	py := torchPython(t)
	args := []string{filepath.Join("testdata", "llama.py"), "2", "64", "4", "172", "100", "2", "16", "bf16"}
	meta, real := trace(t, py, "meta", args...), trace(t, py, "cpu", args...)
	am, ar := allocations(meta), allocations(real)
	if strings.Join(am, " ") != strings.Join(ar, " ") {
		t.Errorf("allocations differ:\nmeta %v\nreal %v", am, ar)
	}
	rm, rr := estimate.ReplayTrace(meta, estimate.TraceReplay{}), estimate.ReplayTrace(real, estimate.TraceReplay{})
	if rm.PeakAllocatedBytes != rr.PeakAllocatedBytes || len(paramAllocs(meta)) != 2*9+3 {
		t.Errorf("peak allocated meta %d, real %d; %d parameters", rm.PeakAllocatedBytes, rr.PeakAllocatedBytes, len(paramAllocs(meta)))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestCheckpointLargerThanTheHost: a safetensors checkpoint the host
// cannot map (testdata/bigsafetensors.py caps its own address space 2 GiB
// above what it uses and loads 8 GiB of weights; a 48 GB Flux transformer
// on a 24 GB host is the same) is read from its header alone, each tensor
// made without data, where safetensors' mmap is refused and the trace had
// stopped at load_file. On torch 2 (Debian 13's root has safetensors;
// Debian 12 packages none).
func TestCheckpointLargerThanTheHost(t *testing.T) {
	py := torch2Python(t)
	if exec.Command(py, "-c", "import safetensors.torch").Run() != nil {
		t.Skip("no safetensors for " + py)
	}
	tr := trace(t, py, "meta", filepath.Join("testdata", "bigsafetensors.py"), t.TempDir())
	r := estimate.ReplayTrace(tr, estimate.TraceReplay{})
	if want := int64(32 * (8192*8192 + 8192)); r.Params != want || r.Steps != 2 {
		t.Errorf("%d parameters, %d steps: want %d and 2", r.Params, r.Steps, want)
	}
}
