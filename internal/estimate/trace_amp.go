package estimate

// The amp lever: mixed precision, the field's first advice for a job that
// trains in float32. Unlike the other levers it is not a what-if of the
// trace: which activations autocast makes in the lower dtype depends on
// the op that made each and on what fed it (a residual add of a bf16 and
// an fp32 tensor is fp32), and the weights' copies are allocations the
// fp32 trace does not have. The program is traced a second time with its
// forward under CUDA autocast as the AMP recipe runs it
// (torchmem_hook/_trace_amp.py), and that trace is the lever.

// The amp levers: bf16 where the GPU has it (sm80 and later), fp16 with a
// GradScaler before (V100, T4), whose memory is the same but for the
// scaler's few scalars.
const (
	ampLeverBF16 = "amp-bf16"
	ampLeverFP16 = "amp-fp16"
)

// bf16MinCC: the first compute capability (x10) with bf16 tensor cores (Ampere).
const bf16MinCC = 80

// minAutocastActivations: the float32 bytes a trace's forward must make
// for a second trace to be worth its time. Autocast at most halves them,
// so below twice the lever threshold it cannot be offered.
const minAutocastActivations = 2 * minTraceLeverSaving

// Retrace is a lever found by tracing the program again with the change
// made: the retrace as it ended.
type Retrace struct {
	Lever, Change string
	Trace         *Trace
}

// RetraceNotOffered: a retrace that is no lever, and why: it failed
// (End: the program failed under the change), or it ran through and saved
// less than a lever's worth (ProcessBytes: its figure, which may be more
// than the trace's: mixed precision with attention computed by hand keeps
// bf16 scores and their fp32 softmax both).
type RetraceNotOffered struct {
	Lever        string     `json:"lever"`
	ProcessBytes int64      `json:"process_bytes,omitempty"`
	End          *TraceNote `json:"end,omitempty"`
}

// AutocastRetrace says in which dtype t's program is worth tracing again
// under autocast for the amp lever: "bfloat16", "float16" on a GPU of
// compute capability cc (x10; 0: sm90, the tracer's default) without
// bf16, or "" when not: the trace is not the meta device's, it is a
// retrace already, it stopped short (a second run would stop there too),
// the program has autocast's weight copies (it runs autocast itself), or
// its forward makes too little in float32 (a bf16 model, a small one).
func AutocastRetrace(t *Trace, cc int) string {
	if t.Header["device"] != "meta" || t.Header["autocast"] != "" || t.End == nil || t.End.Kind != "steps" && t.End.Kind != "exit" {
		return ""
	}
	var fp32 int64
	for i := range t.Allocs {
		a := &t.Allocs[i]
		if a.Kind == "autocast" {
			return ""
		}
		if a.Kind == "fwd" && a.Phase == "forward" && a.DType == "float32" {
			fp32 += a.Bytes
		}
	}
	switch {
	case fp32 < minAutocastActivations:
		return ""
	case cc != 0 && cc < bf16MinCC:
		return "float16"
	}
	return "bfloat16"
}

// AmpRetrace is the amp lever of a retrace under autocast in dtype
// (AutocastRetrace's answer).
func AmpRetrace(dtype string, rt *Trace) Retrace {
	if dtype == "float16" {
		return Retrace{ampLeverFP16, "torch.autocast(\"cuda\", dtype=torch.float16) around the forward and the loss, " +
			"with torch.cuda.amp.GradScaler (traced again under it)", rt}
	}
	return Retrace{ampLeverBF16, "torch.autocast(\"cuda\", dtype=torch.bfloat16) around the forward and the loss " +
		"(traced again under it)", rt}
}

// failed: why the retrace is no lever, or nil when it ran the steps (or
// the program ended by itself) under the change it was made for.
func (r Retrace) failed() *TraceNote {
	end := r.Trace.End
	switch {
	case end == nil:
		return &TraceNote{Kind: "killed", Message: "the retrace ended without a word from the tracer"}
	case end.Kind != "steps" && end.Kind != "exit":
		return end
	}
	for _, w := range r.Trace.Warnings {
		if w.Kind == "autocast" { // the hook could not open or close its region
			return &w
		}
	}
	return nil
}
