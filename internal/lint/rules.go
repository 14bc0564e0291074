package lint

// Rule is one check: its id, short name, default severity, the fix printed
// with each finding, and the function that runs it over a file.
type Rule struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Severity string `json:"severity"`
	Summary  string `json:"summary"` // why it costs memory, one line
	Fix      string `json:"fix"`
}

// Rules returns every rule in id order.
func Rules() []Rule {
	out := make([]Rule, len(allRules))
	for i, r := range allRules {
		out[i] = *r
	}
	return out
}

var allRules = []*Rule{
	{ID: "TM000", Name: "syntax-error", Severity: SevError,
		Summary: "the file could not be parsed by this Python, so no rule could check it",
		Fix:     "fix the syntax error, or pass --python for the interpreter the job really uses"},
	{ID: "TM001", Name: "eval-without-no-grad", Severity: SevWarning,
		Summary: "the model runs for evaluation with autograd on, so every batch keeps its activation graph until the outputs are dropped",
		Fix:     "wrap the evaluation in `with torch.inference_mode():` (or `torch.no_grad()`), or decorate the function with `@torch.no_grad()`"},
	{ID: "TM002", Name: "accumulated-autograd-history", Severity: SevError,
		Summary: "a tensor with autograd history is accumulated across iterations, keeping every iteration's graph alive",
		Fix:     "accumulate a Python number (`loss.item()`) or a detached tensor (`loss.detach()`)"},
	{ID: "TM003", Name: "grad-accumulation-mismatch", Severity: SevWarning,
		Summary: "gradient accumulation that does not divide the loss by the number of steps, or steps the optimizer outside the accumulation condition",
		Fix:     "divide the loss by the accumulation steps before backward, and call optimizer.step()/zero_grad() only inside `if (step + 1) % accum_steps == 0:`"},
	{ID: "TM004", Name: "gradients-not-released", Severity: SevWarning,
		Summary: "gradients are never zeroed, or zeroed with set_to_none=False, which keeps a full set of gradient tensors allocated through the next forward pass",
		Fix:     "call `optimizer.zero_grad()` (set_to_none=True, the default since PyTorch 2.0) once per optimizer step"},
	{ID: "TM005", Name: "empty-cache-in-loop", Severity: SevWarning,
		Summary: "torch.cuda.empty_cache() every step synchronizes and returns cached blocks the next step must cudaMalloc again; it frees nothing the job can use",
		Fix:     "remove it from the loop; if fragmentation is the problem set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"},
	{ID: "TM006", Name: "dataset-python-objects", Severity: SevWarning,
		Summary: "a Dataset keeps per-sample Python lists/dicts and is read by DataLoader workers: reference counting writes to every object, so each worker slowly copies the whole structure (copy-on-read)",
		Fix:     "store samples in numpy arrays (np.array of fixed-width strings or offsets into one bytes buffer), or a memory-mapped file, instead of lists of Python objects"},
	{ID: "TM007", Name: "cuda-in-worker", Severity: SevError,
		Summary: "CUDA work in Dataset.__getitem__ or a collate_fn that runs in DataLoader workers: each worker creates its own CUDA context (hundreds of MiB of GPU memory each), or fails under fork",
		Fix:     "return CPU tensors from the dataset and collate_fn; move the batch to the GPU in the training loop (`pin_memory=True` + `.to(device, non_blocking=True)`)"},
	{ID: "TM008", Name: "data-assignment-cycle", Severity: SevInfo,
		Summary: "assigning `.data` from a tensor computed from the same tensor with autograd on records a graph (and its saved tensors) only to throw it away, and hides the update from autograd; it forms no reference cycle (reference counting frees the temporary at once), so the cost is transient",
		Fix:     "update in place under `torch.no_grad()` (`with torch.no_grad(): p.copy_(new)`), or assign a detached value"},
	{ID: "TM009", Name: "deprecated-amp-api", Severity: SevInfo,
		Summary: "torch.cuda.amp.autocast / GradScaler are deprecated (FutureWarning since PyTorch 2.4)",
		Fix:     "use `torch.amp.autocast(\"cuda\", ...)` and `torch.amp.GradScaler(\"cuda\")`"},
	{ID: "TM010", Name: "outputs-kept-on-gpu", Severity: SevWarning,
		Summary: "model outputs (logits, hidden states, attention maps) of every batch are kept in a list on the GPU",
		Fix:     "append `out.detach().cpu()` (or only the reduced values you need) instead of the GPU tensor"},
	{ID: "TM011", Name: "torch-load-without-map-location", Severity: SevInfo,
		Summary: "torch.load without map_location in a multi-process job or on a CPU inference path restores every tensor on the device it was saved from: each rank fills the saving GPU, all at once",
		Fix:     "pass `map_location=\"cpu\"` (then move what you need), or the target device"},
	{ID: "TM012", Name: "retain-graph-in-loop", Severity: SevWarning,
		Summary: "backward(retain_graph=True) in a loop keeps the whole graph's saved activations alive after backward",
		Fix:     "drop retain_graph=True, or sum the losses and call backward once; keep it only for a second backward over the same graph"},
	{ID: "TM013", Name: "too-many-workers-for-host", Severity: SevWarning,
		Summary: "num_workers is larger than this machine's process limit (ulimit -u) or /dev/shm can hold",
		Fix:     "lower num_workers, or raise the limit (`ulimit -u`, `--shm-size` / a larger /dev/shm)"},
	{ID: "TM014", Name: "anomaly-detection-left-on", Severity: SevWarning,
		Summary: "autograd anomaly detection records a Python traceback for every graph node and checks every backward: memory and time grow with graph size",
		Fix:     "enable it only while debugging (behind a flag), never in production training runs"},
	{ID: "TM015", Name: "hook-keeps-graph", Severity: SevWarning,
		Summary: "a module hook stores its output or gradient with the autograd graph: a forward hook appending to a list that is never cleared keeps every batch's activations; a backward hook storing grad_output forms a reference cycle",
		Fix:     "store `output.detach()` (and `.cpu()` if it is kept for long), and clear the list after each batch"},
	{ID: "TM016", Name: "rnn-hidden-not-detached", Severity: SevWarning,
		Summary: "a recurrent hidden state is fed back from one training iteration to the next without .detach(): each batch's graph stays linked to every previous one (with retain_graph=True, memory grows every batch; without it, the second backward fails)",
		Fix:     "detach the state between batches: `hidden = hidden.detach()` (an LSTM's (h, c): `hidden = tuple(h.detach() for h in hidden)`), or re-initialize it per batch; then drop retain_graph=True"},
	{ID: "TM017", Name: "gc-collect-per-sample", Severity: SevWarning,
		Summary: "gc.collect() in Dataset.__getitem__ runs a full collection for every sample: it frees nothing reference counting would not, and slows loading by orders of magnitude, so people raise num_workers (and memory) to compensate",
		Fix:     "remove it; if worker memory grows, find what holds it (per-sample Python objects: TM006) or collect in worker_init_fn / every N batches in the training loop"},
	{ID: "TM018", Name: "file-handle-shared-with-workers", Severity: SevWarning,
		Summary: "an HDF5/LMDB handle opened in Dataset.__init__ is inherited by every forked DataLoader worker: h5py and LMDB handles are not fork-safe (corrupt reads, crashes), and under spawn they cannot be pickled",
		Fix:     "store the path in __init__ and open the file lazily in the worker: `if self.db is None: self.db = h5py.File(self.path, \"r\")` at the top of __getitem__ (or in worker_init_fn)"},
	{ID: "TM019", Name: "tensor-created-then-moved", Severity: SevInfo,
		Summary: "a tensor is built in host memory and copied to the GPU right after (torch.randn(...).cuda()): an extra host allocation and a synchronous copy, every time it runs",
		Fix:     "create it on the device: `torch.randn(..., device=device)` (or `torch.zeros_like(x)` to follow an existing tensor)"},
	{ID: "TM020", Name: "accumulation-loss-not-scaled", Severity: SevWarning,
		Summary: "a loop backpropagates every batch but steps the optimizer only every N batches (a counter, or a modulus TM003 does not read) without dividing the loss by N: the summed gradient is N times too large",
		Fix:     "divide the loss by the number of accumulated batches before backward (`(loss / accum_steps).backward()`)"},
}

var ruleByID = func() map[string]*Rule {
	m := make(map[string]*Rule, len(allRules))
	for _, r := range allRules {
		m[r.ID] = r
	}
	return m
}()

// checks maps rule ids to their implementations (TM010 runs inside
// checkTM002TM010).
var checks = map[string]func(*file){
	"TM001": checkTM001,
	"TM002": checkTM002TM010,
	"TM003": checkTM003,
	"TM004": checkTM004,
	"TM005": checkTM005,
	"TM006": checkTM006,
	"TM007": checkTM007,
	"TM008": checkTM008,
	"TM009": checkTM009,
	"TM011": checkTM011,
	"TM012": checkTM012,
	"TM013": checkTM013,
	"TM014": checkTM014,
	"TM015": checkTM015,
	"TM016": checkTM016,
	"TM017": checkTM017,
	"TM018": checkTM018,
	"TM019": checkTM019,
	"TM020": checkTM020,
}
