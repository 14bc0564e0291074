package lint

import (
	"strings"
)

// Training-loop rules: TM004, TM005, TM012.

func checkTM004(f *file) {
	if f.accumulatesGradsManually() {
		// p.grad += g needs the .grad tensors to exist: set_to_none=False is
		// required there, and the gradients are managed by hand.
		return
	}
	for _, call := range f.nodes("Call") {
		if _, m := methodCall(call); m == "zero_grad" {
			if v, ok := constBool(kwarg(call, "set_to_none")); ok && !v {
				f.report(call, "TM004", "tm004.set_to_none_false")
			}
			if f.oldZeroGradDefault(call) {
				f.report(call, "TM004", "tm004.old_default", f.torch.String())
			}
		}
	}
	if !f.zeroesGrads() {
		reportNeverZeroed(f, func(*Node) bool { return true })
		return
	}
	// The file resets gradients somewhere: a loop is still reported when no
	// code linked to its own by calls does (see resetUnits), built only
	// once a candidate loop turns up.
	var lacks func(*Node) bool
	reportNeverZeroed(f, func(loop *Node) bool {
		if lacks == nil {
			lacks = f.resetUnits()
		}
		return lacks(loop)
	})
}

// reportNeverZeroed reports each training loop whose unit (resetUnits)
// lacks a gradient reset.
func reportNeverZeroed(f *file, lacksReset func(*Node) bool) {
	seen := map[*Node]bool{}
	for _, call := range f.nodes("Call") {
		if !f.isOptimStep(call) {
			continue
		}
		loops := loopsOf(call)
		if len(loops) == 0 || seen[loops[0]] || !trainsIn(loops[0], "\x00") || !lacksReset(loops[0]) ||
			f.distAutograd(loops[0]) {
			continue
		}
		seen[loops[0]] = true
		f.report(call, "TM004", "tm004.never_zeroed", loops[0].Line)
	}
}

// oldZeroGradDefault: a plain optimizer.zero_grad() in a loop, in a file
// known to run on PyTorch 1.7-1.13, where set_to_none exists but defaults
// to False.
func (f *file) oldZeroGradDefault(call *Node) bool {
	recv, _ := methodCall(call)
	v := f.torch
	return v.Known() && v.AtLeast(1, 7) && !v.AtLeast(2, 0) && kwarg(call, "set_to_none") == nil &&
		len(call.L("args")) == 0 && len(loopsOf(call)) > 0 && f.isOptimizer(recv)
}

// distAutograd: the loop runs under, or opens, a distributed autograd
// context (torch.distributed.rpc). Gradients live in the context, which is
// released every iteration; there is nothing to zero (the RPC parameter
// server tutorial: "not necessary to zero grads since they are accumulated
// into the distributed autograd context").
func (f *file) distAutograd(loop *Node) bool {
	isCtx := func(n *Node) bool {
		if !n.Is("withitem") {
			return false
		}
		c := n.K("context_expr")
		return c.Is("Call") && strings.HasSuffix(f.qualify(c.K("func")), "distributed.autograd.context")
	}
	for p := loop; p != nil; p = p.Parent {
		if p.Is("With", "AsyncWith") && len(p.L("items")) > 0 && isCtx(p.L("items")[0]) {
			return true
		}
	}
	return findInScope(loop, isCtx) != nil
}

// accumulatesGradsManually: p.grad += g, p.grad.add_(g), p.grad.data.add_(g)
// or p.grad.copy_(g) somewhere in the file.
func (f *file) accumulatesGradsManually() bool {
	for _, a := range f.nodes("Attribute") {
		if a.S("attr") != "grad" {
			continue
		}
		if a.Field == "target" && a.Parent.Is("AugAssign") {
			return true
		}
		p := a.Parent
		if p.Is("Attribute") && p.S("attr") == "data" {
			p = p.Parent
		}
		if p.Is("Attribute") && p.Field == "func" && (p.S("attr") == "add_" || p.S("attr") == "copy_") {
			return true
		}
	}
	return false
}

// zeroesGrads reports any gradient reset in the file.
func (f *file) zeroesGrads() bool {
	for _, a := range f.nodes("Attribute") {
		if isGradReset(a) {
			return true
		}
	}
	return false
}

// isGradReset says whether attribute a resets gradients: zero_grad (called
// or passed), p.grad = None, p.grad.zero_() / detach_().
func isGradReset(a *Node) bool {
	switch a.S("attr") {
	case "zero_grad", "zero_grad_":
		return true
	case "grad":
		if a.Field == "targets" || a.Field == "target" {
			return true
		}
		p := a.Parent
		return p.Is("Attribute") && (p.S("attr") == "zero_" || p.S("attr") == "detach_" || p.S("attr") == "data")
	}
	return false
}

func checkTM005(f *file) {
	for _, call := range f.nodes("Call") {
		if lastName(call.K("func")) != "empty_cache" {
			continue
		}
		q := f.qualify(call.K("func"))
		if q != "torch.cuda.empty_cache" && q != "torch.cuda.memory.empty_cache" {
			continue
		}
		loops := loopsOf(call)
		if len(loops) == 0 || conditional(call, loops[0]) || !f.hotLoop(loops[0]) {
			continue
		}
		f.report(call, "TM005", "tm005.in_loop", loops[0].Line)
	}
}

// conditional reports n under an if, an except handler or a finally block
// below loop: periodic or OOM-recovery calls are deliberate.
func conditional(n, loop *Node) bool {
	for c, p := n, n.Parent; p != nil && p != loop; c, p = p, p.Parent {
		if p.Is("If", "IfExp") && !availabilityTest(p.K("test")) || p.Is("ExceptHandler") || p.Is("Try") && c.Field == "finalbody" {
			return true
		}
	}
	return false
}

// availabilityTest: `if torch.cuda.is_available():` / `if device.type ==
// "cuda":` guards the call on every iteration all the same.
func availabilityTest(test *Node) bool {
	if len(modRight(test)) > 0 {
		return false
	}
	toks := nameTokens(test)
	for t := range toks {
		switch t {
		case "torch", "cuda", "is", "available", "device", "type", "gpu", "use":
		default:
			return false
		}
	}
	return len(toks) > 0
}

// hotLoop: a loop whose own body (not nested loops) runs a model, a loss,
// a backward or an optimizer step, or that iterates over batches.
func (f *file) hotLoop(loop *Node) bool {
	if loop.Is("For", "AsyncFor") && anyToken(nameTokens(loop.K("iter")), "loader", "dataloader", "batch", "batches") {
		return true
	}
	return findInScope(loop, func(n *Node) bool {
		if !n.Is("Call") || innermostLoop(n) != loop {
			return false
		}
		_, isBackward := backwardOf(n)
		return isBackward || f.isModelCall(n) || f.isLossCall(n) || f.isOptimStep(n)
	}) != nil
}

func checkTM012(f *file) {
	for _, call := range f.nodes("Call") {
		if _, ok := backwardOf(call); !ok {
			continue
		}
		if v, ok := constBool(kwarg(call, "retain_graph")); !ok || !v {
			continue
		}
		if v, ok := constBool(kwarg(call, "create_graph")); ok && v {
			continue
		}
		loops := loopsOf(call)
		if len(loops) == 0 || laterPlainBackward(loops[0], call) || graphFromOutside(loops[0], call) ||
			f.carriesHidden(loops[0]) { // TM016 gives the right fix: detach the state
			continue
		}
		f.report(call, "TM012", "tm012.retain", loops[0].Line)
	}
}

// laterPlainBackward finds a backward after call in the same loop body that
// does not retain the graph, which frees it (the documented two-loss use).
func laterPlainBackward(loop, call *Node) bool {
	return findInScope(loop, func(n *Node) bool {
		if _, ok := backwardOf(n); !ok || n == call || n.Line < call.Line {
			return false
		}
		v, ok := constBool(kwarg(n, "retain_graph"))
		return !(ok && v)
	}) != nil
}

// graphFromOutside: the differentiated tensor is a name bound before the
// loop, so every iteration backpropagates the same graph again (which needs
// retain_graph=True and keeps nothing new alive).
func graphFromOutside(loop, call *Node) bool {
	t, _ := backwardOf(call)
	if !t.Is("Name", "Attribute") {
		return false
	}
	return !assignedIn(loop, dotted(t))
}
