package lint

import "strings"

// A small forward data-flow pass over one function's statements, in source
// order, that tracks which names hold tensors with autograd history (hist)
// and which hold raw model outputs that may sit on the GPU (out). It is
// deliberately narrow: a value is tainted only when it is provably derived
// from a model call, a loss function, or a tensor .backward() is called on;
// any function or method it does not know makes the value clean.

type taint struct{ hist, out bool }

func (t taint) any() bool { return t.hist || t.out }

func (a taint) or(b taint) taint { return taint{a.hist || b.hist, a.out || b.out} }

// Methods that return a tensor still attached to its input's graph.
var keepMethods = map[string]bool{
	"sum": true, "mean": true, "to": true, "cuda": true, "float": true, "half": true,
	"double": true, "bfloat16": true, "view": true, "reshape": true, "squeeze": true,
	"unsqueeze": true, "clone": true, "abs": true, "pow": true, "sqrt": true, "exp": true,
	"log": true, "contiguous": true, "flatten": true, "transpose": true, "permute": true,
	"norm": true, "softmax": true, "log_softmax": true, "sigmoid": true, "tanh": true,
	"neg": true, "mul": true, "add": true, "sub": true, "div": true, "expand": true,
	"type_as": true, "masked_fill": true, "view_as": true, "squeeze_": true, "cpu": true,
}

// Attributes that are not tensors of the graph (or are detached).
var cleanAttrs = map[string]bool{
	"shape": true, "dtype": true, "device": true, "ndim": true, "requires_grad": true,
	"is_cuda": true, "grad_fn": true, "is_leaf": true,
}

// Tensor functions whose result carries no history (indices, masks, copies).
var cleanTorchFuncs = map[string]bool{
	"argmax": true, "argmin": true, "eq": true, "ne": true, "lt": true, "gt": true, "le": true,
	"ge": true, "isnan": true, "isinf": true, "isfinite": true, "tensor": true, "no_grad": true,
	"numel": true, "is_tensor": true, "equal": true, "allclose": true, "argsort": true,
	// (values, indices) pairs: unpacking makes both names look alike, and
	// the indices are what scripts keep (_, preds = torch.max(out, 1)).
	"max": true, "min": true, "topk": true, "sort": true, "kthvalue": true, "mode": true,
	"median": true, "unique": true, "nonzero": true, "bincount": true, "count_nonzero": true,
}

type flow struct {
	f        *file
	state    map[string]taint
	backward map[string]bool // names .backward() is called on in this scope
	// anyBackward: the scope backpropagates something, so accumulated
	// history may be meant for it.
	anyBackward bool
	// sum is set in summary mode (summary.go): accumulations and returns
	// are recorded for the callers instead of reported.
	sum *summaryRec
	// started: the scope's first statement has been seen (stepHook is set
	// then).
	started  bool
	stepHook bool // the scope is a Lightning training_step
}

// expr returns the taint of e under the current state.
func (fl *flow) expr(e *Node) taint {
	switch e.TypeOr() {
	case "Name", "Attribute":
		if e.Is("Attribute") {
			switch attr := e.S("attr"); {
			case cleanAttrs[attr]:
				return taint{}
			case attr == "data" || attr == "grad":
				t := fl.expr(e.K("value"))
				return taint{out: t.out}
			case attr == "loss":
				// outputs.loss: one scalar per batch, not the batch's
				// logits or hidden states (its history still counts)
				return taint{hist: fl.expr(e.K("value")).hist}
			}
			if t, ok := fl.state[dotted(e)]; ok {
				return t
			}
			return fl.expr(e.K("value"))
		}
		return fl.state[dotted(e)]
	case "Subscript", "Starred":
		return fl.expr(e.K("value"))
	case "BinOp":
		return fl.expr(e.K("left")).or(fl.expr(e.K("right")))
	case "UnaryOp":
		if e.K("op").Is("USub", "UAdd") {
			return fl.expr(e.K("operand"))
		}
	case "IfExp":
		return fl.expr(e.K("body")).or(fl.expr(e.K("orelse")))
	case "Tuple", "List":
		var t taint
		for _, x := range e.L("elts") {
			t = t.or(fl.expr(x))
		}
		return t
	case "Dict":
		var t taint
		for _, x := range e.L("values") {
			t = t.or(fl.expr(x))
		}
		return t
	case "Call":
		return fl.call(e)
	}
	return taint{}
}

func (fl *flow) call(e *Node) taint {
	f := fl.f
	gradOn := !f.gradOff(e)
	switch {
	case f.isModelCall(e) && isPipelineCall(e):
		return taint{out: pipelineReturnsTensors(e)}
	case f.isModelCall(e):
		return taint{hist: gradOn, out: true}
	case f.isLossCall(e):
		return taint{hist: gradOn}
	}
	q := f.qualify(e.K("func"))
	if len(q) > 6 && q[:6] == "torch." {
		var t taint
		if !cleanTorchFuncs[lastName(e.K("func"))] {
			for _, a := range e.L("args") {
				t = t.or(fl.expr(a))
			}
		}
		return t
	}
	if c, ok := f.resolveCall(e); ok {
		return fl.calleeReturn(e, c, gradOn)
	}
	recv, m := methodCall(e)
	if recv != nil {
		t := fl.expr(recv)
		switch {
		case m == "detach" || m == "detach_":
			return taint{out: t.out}
		case m == "cpu" || m == "numpy":
			return taint{hist: t.hist && m == "cpu"}
		case m == "to" && movesToCPU(e):
			return taint{hist: t.hist}
		case keepMethods[m]:
			return t
		}
		return taint{}
	}
	return taint{}
}

// movesToCPU reports x.to("cpu") / x.to(torch.device("cpu")) / x.to(device="cpu").
func movesToCPU(call *Node) bool {
	arg := kwarg(call, "device")
	if arg == nil && len(call.L("args")) > 0 {
		arg = call.L("args")[0]
	}
	if s, ok := constStr(arg); ok {
		return s == "cpu"
	}
	if arg.Is("Call") && lastName(arg.K("func")) == "device" && len(arg.L("args")) > 0 {
		s, _ := constStr(arg.L("args")[0])
		return s == "cpu"
	}
	return false
}

// isPipelineCall reports a call of something named like an inference
// pipeline (pipe(...), pipeline(...), sd_pipeline(...)): diffusers and
// transformers pipelines run under no_grad and return host objects.
func isPipelineCall(call *Node) bool {
	last := strings.ToLower(lastName(call.K("func")))
	return last == "pipe" || last == "pipeline" || strings.HasSuffix(last, "_pipe") || strings.HasSuffix(last, "_pipeline")
}

// pipelineReturnsTensors reports output_type="pt" / "latent": only then
// does a diffusers pipeline return tensors (the default is PIL images,
// "np" numpy arrays).
func pipelineReturnsTensors(call *Node) bool {
	s, ok := constStr(kwarg(call, "output_type"))
	return ok && (s == "pt" || s == "latent")
}
