package lint

import (
	"fmt"
	"regexp"
)

// Training-loop rules: TM003, TM004, TM005, TM012.

var accumNameRe = regexp.MustCompile(`(?i)accum|update_freq|iters_to_accumulate|^ga_?steps$`)

// modRight returns the right operands of the % operations in an if test.
func modRight(test *Node) []*Node {
	var out []*Node
	test.Walk(func(n *Node) bool {
		if n.Is("BinOp") && n.K("op").Is("Mod") {
			out = append(out, n.K("right"))
		}
		return true
	})
	return out
}

func checkTM003(f *file) {
	for _, ifn := range f.nodes("If") {
		loops := loopsOf(ifn)
		if len(loops) == 0 {
			continue
		}
		for _, v := range modRight(ifn.K("test")) {
			named := v.Is("Name", "Attribute") && accumNameRe.MatchString(lastName(v))
			n, isConst := constInt(v)
			if !named && !(isConst && n >= 2) {
				continue
			}
			if f.hasOptimStep(ifn.L("body")) && !hasBackward(ifn.L("body")) && !zeroesOutside(loops[0], ifn) {
				f.checkLossScaled(ifn, loops[0], v)
			}
			if named {
				f.checkStepOutside(ifn, loops[0], v)
			}
		}
	}
}

func (f *file) hasOptimStep(body []*Node) bool {
	found := false
	for _, s := range body {
		s.Walk(func(n *Node) bool {
			if f.isOptimStep(n) {
				found = true
			}
			return !isFunc(n)
		})
	}
	return found
}

// hasBackward: the body backpropagates itself (alternating GAN updates,
// not accumulation).
func hasBackward(body []*Node) bool {
	found := false
	for _, s := range body {
		s.Walk(func(n *Node) bool {
			if _, ok := backwardOf(n); ok {
				found = true
			}
			return !isFunc(n)
		})
	}
	return found
}

// zeroesOutside: gradients are zeroed every iteration outside the
// condition, so nothing accumulates.
func zeroesOutside(loop, ifn *Node) bool {
	found := false
	walkScope(loop, func(n *Node) {
		if _, m := methodCall(n); m == "zero_grad" && !under(n, ifn) {
			found = true
		}
	})
	return found
}

// checkLossScaled: the loop backpropagates, but the accumulation count is
// never used to scale anything (loss / accum_steps), and no framework does it.
func (f *file) checkLossScaled(ifn, loop, v *Node) {
	var backward *Node
	scaled := false
	key := dotted(v)
	n0, isConst := constInt(v)
	refs := func(x *Node) bool {
		if isConst {
			n, ok := constInt(x)
			return ok && n == n0
		}
		return dotted(x) == key
	}
	lossKey := ""
	walkScope(loop, func(n *Node) {
		if t, ok := backwardOf(n); ok && backward == nil {
			backward, lossKey = n, dotted(t)
		}
	})
	walkScope(loop, func(n *Node) {
		switch {
		case n.Is("BinOp") && n.K("op").Is("Div", "Mult", "FloorDiv"):
			scaled = scaled || refs(n.K("left")) || refs(n.K("right"))
			// loss / num_items: normalised some other way (per token)
			scaled = scaled || lossKey != "" && n.K("op").Is("Div") && dotted(n.K("left")) == lossKey
		case n.Is("AugAssign") && n.K("op").Is("Div", "Mult"):
			scaled = scaled || refs(n.K("value")) || n.K("op").Is("Div") && lossKey != "" && dotted(n.K("target")) == lossKey
		case n.Is("Call") && !isConst:
			for _, a := range n.L("args") {
				scaled = scaled || refs(a)
			}
			for _, k := range n.L("keywords") {
				scaled = scaled || refs(k.K("value"))
			}
		}
	})
	scaled = scaled || accumulateContext(loop)
	if backward != nil && !scaled {
		f.report(backward, "TM003", fmt.Sprintf(
			"the optimizer steps every %s micro-batches (line %d) but the loss is never divided by %s: the accumulated gradient is %s times too large",
			spell(v), ifn.Line, spell(v), spell(v)))
	}
}

// accumulateContext: `with accelerator.accumulate(model):` in or around
// the loop; Accelerate scales the loss and gates the step itself.
func accumulateContext(loop *Node) bool {
	for p := loop; p != nil && !isFunc(p); p = p.Parent {
		if withAccumulate(p) {
			return true
		}
	}
	found := false
	walkScope(loop, func(n *Node) { found = found || withAccumulate(n) })
	return found
}

func withAccumulate(n *Node) bool {
	if !n.Is("With", "AsyncWith") {
		return false
	}
	for _, it := range n.L("items") {
		if lastName(it.K("context_expr").K("func")) == "accumulate" {
			return true
		}
	}
	return false
}

func spell(v *Node) string {
	if n, ok := constInt(v); ok {
		return fmt.Sprint(n)
	}
	return dotted(v)
}

// checkStepOutside: with an accumulation condition in the loop, an
// optimizer step that is not under any if runs every micro-batch.
func (f *file) checkStepOutside(ifn, loop, v *Node) {
	if accumulateContext(loop) {
		return
	}
	walkScope(loop, func(n *Node) {
		if !f.isOptimStep(n) || under(n, ifn) || innermostLoop(n) != loop {
			return
		}
		for p := n.Parent; p != loop; p = p.Parent {
			if p.Is("If", "IfExp", "Try", "ExceptHandler") {
				return
			}
		}
		f.report(n, "TM003", fmt.Sprintf(
			"the optimizer steps every micro-batch, outside the accumulation condition at line %d (every %s steps)", ifn.Line, spell(v)))
	})
}

func checkTM004(f *file) {
	for _, call := range f.nodes("Call") {
		if _, m := methodCall(call); m == "zero_grad" {
			if v, ok := constBool(kwarg(call, "set_to_none")); ok && !v {
				f.report(call, "TM004", "zero_grad(set_to_none=False) keeps every .grad tensor allocated between steps")
			}
		}
	}
	if f.zeroesGrads() {
		return
	}
	seen := map[*Node]bool{}
	for _, call := range f.nodes("Call") {
		if !f.isOptimStep(call) {
			continue
		}
		loops := loopsOf(call)
		if len(loops) == 0 || seen[loops[0]] || !trainsIn(loops[0], "\x00") {
			continue
		}
		seen[loops[0]] = true
		f.report(call, "TM004", fmt.Sprintf(
			"the training loop at line %d never zeroes gradients: they accumulate across steps", loops[0].Line))
	}
}

// zeroesGrads reports any gradient reset in the file: zero_grad (called or
// passed), p.grad = None, p.grad.zero_() / detach_().
func (f *file) zeroesGrads() bool {
	for _, a := range f.nodes("Attribute") {
		switch a.S("attr") {
		case "zero_grad", "zero_grad_":
			return true
		case "grad":
			if a.Field == "targets" || a.Field == "target" {
				return true
			}
			if p := a.Parent; p.Is("Attribute") && (p.S("attr") == "zero_" || p.S("attr") == "detach_" || p.S("attr") == "data") {
				return true
			}
		}
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
		f.report(call, "TM005", fmt.Sprintf(
			"torch.cuda.empty_cache() runs on every iteration of the loop at line %d", loops[0].Line))
	}
}

// conditional reports n under an if, an except handler or a finally block
// below loop: periodic or OOM-recovery calls are deliberate.
func conditional(n, loop *Node) bool {
	for c, p := n, n.Parent; p != nil && p != loop; c, p = p, p.Parent {
		if p.Is("If", "IfExp", "ExceptHandler") || p.Is("Try") && c.Field == "finalbody" {
			return true
		}
	}
	return false
}

// hotLoop: a loop whose own body (not nested loops) runs a model, a loss,
// a backward or an optimizer step, or that iterates over batches.
func (f *file) hotLoop(loop *Node) bool {
	if loop.Is("For", "AsyncFor") && anyToken(nameTokens(loop.K("iter")), "loader", "dataloader", "batch", "batches") {
		return true
	}
	hot := false
	walkScope(loop, func(n *Node) {
		if hot || !n.Is("Call") || innermostLoop(n) != loop {
			return
		}
		_, isBackward := backwardOf(n)
		hot = isBackward || f.isModelCall(n) || f.isLossCall(n) || f.isOptimStep(n)
	})
	return hot
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
		if len(loops) == 0 || laterPlainBackward(loops[0], call) || graphFromOutside(loops[0], call) {
			continue
		}
		f.report(call, "TM012", fmt.Sprintf(
			"backward(retain_graph=True) in the loop at line %d with no later backward that frees the graph", loops[0].Line))
	}
}

// laterPlainBackward finds a backward after call in the same loop body that
// does not retain the graph, which frees it (the documented two-loss use).
func laterPlainBackward(loop, call *Node) bool {
	found := false
	walkScope(loop, func(n *Node) {
		if _, ok := backwardOf(n); !ok || n == call || n.Line < call.Line {
			return
		}
		if v, ok := constBool(kwarg(n, "retain_graph")); ok && v {
			return
		}
		found = true
	})
	return found
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
