package lint

import "strings"

// The four mechanical fixes (see fix.go). Each returns no edit whenever the
// source is not in the simple form it knows: a fix that is not certain is
// left to the reader of the finding.

// zeroGrad: zero_grad(set_to_none=False) / zero_grad(False) -> True.
func (fx *fixer) zeroGrad(fd Finding) []edit {
	call := fx.findingCall(fd)
	v := kwarg(call, "set_to_none")
	if v == nil && len(call.L("args")) == 1 {
		v = call.L("args")[0]
	}
	if b, ok := constBool(v); !ok || b {
		return nil
	}
	s, e, ok := fx.span(v)
	if !ok {
		return nil
	}
	return []edit{{s, e, "True", AppliedFix{v.Line, "TM004", "set_to_none=True"}}}
}

// mapLocation: torch.load(f, ...) -> torch.load(f, ..., map_location="cpu"),
// inserted after the last argument (before a trailing comma or comment).
func (fx *fixer) mapLocation(fd Finding) []edit {
	call := fx.findingCall(fd)
	last := lastArg(call)
	if last == nil {
		return nil
	}
	_, e, ok := fx.span(last)
	if !ok {
		return nil
	}
	return []edit{{e, e, `, map_location="cpu"`, AppliedFix{call.Line, "TM011", `map_location="cpu"`}}}
}

// lastArg is the argument or keyword value of call that ends last.
func lastArg(call *Node) *Node {
	var last *Node
	later := func(n *Node) bool {
		if last == nil {
			return true
		}
		el, _ := n.Get("el").(int)
		ll, _ := last.Get("el").(int)
		ec, _ := n.Get("ec").(int)
		lc, _ := last.Get("ec").(int)
		return el > ll || el == ll && ec > lc
	}
	for _, a := range call.L("args") {
		if later(a) {
			last = a
		}
	}
	for _, k := range call.L("keywords") {
		if v := k.K("value"); v != nil && later(v) {
			last = v
		}
	}
	return last
}

// creationFuncs build a new tensor and take device=.
var creationFuncs = map[string]bool{
	"zeros": true, "ones": true, "empty": true, "full": true, "rand": true, "randn": true,
	"randint": true, "arange": true, "eye": true, "linspace": true, "logspace": true,
	"tensor": true, "randperm": true,
}

// deviceAtCreation: torch.zeros(3, 4).cuda() -> torch.zeros(3, 4, device="cuda"),
// torch.randn(n).to(device) -> torch.randn(n, device=device). Only a bare
// .cuda() or .to(<device>) on one line, on a creation call without
// device=, pin_memory= or **kwargs.
func (fx *fixer) deviceAtCreation(call *Node) []edit {
	f := fx.f
	recv, m := methodCall(call)
	if !recv.Is("Call") || len(call.L("keywords")) > 0 {
		return nil
	}
	dev := ""
	switch {
	case m == "cuda" && len(call.L("args")) == 0:
		dev = `"cuda"`
	case m == "to" && len(call.L("args")) == 1 && isDeviceExpr(call.L("args")[0]):
		dev = fx.text(call.L("args")[0])
	}
	q := f.qualify(recv.K("func"))
	if dev == "" || strings.Contains(dev, "\n") || !strings.HasPrefix(q, "torch.") || !creationFuncs[q[len("torch."):]] {
		return nil
	}
	if kwarg(recv, "device") != nil || kwarg(recv, "pin_memory") != nil || hasStarKwargs(recv) {
		return nil
	}
	last := lastArg(recv)
	_, recvEnd, ok1 := fx.span(recv)
	_, callEnd, ok2 := fx.span(call)
	if last == nil || !ok1 || !ok2 {
		return nil
	}
	_, lastEnd, ok := fx.span(last)
	tail := string(fx.src[recvEnd:callEnd])
	if !ok || strings.ContainsAny(tail, "#\n\\") {
		return nil
	}
	fix := AppliedFix{call.Line, "device-at-creation", "device=" + dev + " at creation"}
	return []edit{{lastEnd, lastEnd, ", device=" + dev, fix}, {recvEnd, callEnd, "", fix}}
}

// isDeviceExpr: "cuda…" literals, torch.device(...), and names spelled as
// devices (device, self.device, args.device, local_device); a dtype or a
// tensor given to .to() is not one.
func isDeviceExpr(e *Node) bool {
	if s, ok := constStr(e); ok {
		return strings.HasPrefix(s, "cuda")
	}
	if e.Is("Call") {
		return lastName(e.K("func")) == "device"
	}
	l := lastName(e)
	return l == "device" || l == "dev" || strings.HasSuffix(l, "_device")
}

// inferenceMode: `with torch.no_grad():` -> `with torch.inference_mode():`
// in an evaluation block whose results cannot reach autograd later
// (inferenceSafe).
func (fx *fixer) inferenceMode(w *Node) []edit {
	items := w.L("items")
	if len(items) != 1 || items[0].K("optional_vars") != nil {
		return nil
	}
	ce := items[0].K("context_expr")
	fn := ce.K("func")
	if !ce.Is("Call") || len(ce.L("args")) > 0 || len(ce.L("keywords")) > 0 || !fn.Is("Attribute") ||
		fn.S("attr") != "no_grad" || fx.f.qualify(fn) != "torch.no_grad" {
		return nil
	}
	if !fx.f.inferenceSafe(w) {
		return nil
	}
	_, e, ok := fx.span(fn)
	if !ok || e < len("no_grad") || string(fx.src[e-len("no_grad"):e]) != "no_grad" {
		return nil
	}
	return []edit{{e - len("no_grad"), e, "inference_mode", AppliedFix{w.Line, "inference-mode", "torch.inference_mode()"}}}
}
