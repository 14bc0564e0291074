package lint

import (
	"fmt"
	"regexp"
)

// TM003: gradient accumulation done wrong.

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
			if bodyHas(ifn.L("body"), f.isOptimStep) && !hasBackward(ifn.L("body")) && !zeroesOutside(loops[0], ifn) {
				f.checkLossScaled(ifn, loops[0], v)
			}
			if named {
				f.checkStepOutside(ifn, loops[0], v)
			}
		}
	}
}

// bodyHas reports a node for which pred holds in the statements of body,
// outside nested functions.
func bodyHas(body []*Node, pred func(*Node) bool) bool {
	found := false
	for _, s := range body {
		s.Walk(func(n *Node) bool {
			found = found || pred(n)
			return !found && !isFunc(n)
		})
	}
	return found
}

// hasBackward: the body backpropagates itself (alternating GAN updates,
// not accumulation).
func hasBackward(body []*Node) bool {
	return bodyHas(body, func(n *Node) bool {
		_, ok := backwardOf(n)
		return ok
	})
}

// zeroesOutside: gradients are zeroed every iteration outside the
// condition, so nothing accumulates.
func zeroesOutside(loop, ifn *Node) bool {
	return findInScope(loop, func(n *Node) bool {
		_, m := methodCall(n)
		return m == "zero_grad" && !under(n, ifn)
	}) != nil
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
		f.report(backward, "TM003", "tm003.not_divided", spell(v), ifn.Line)
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
	return findInScope(loop, withAccumulate) != nil
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
		f.report(n, "TM003", "tm003.outside", ifn.Line, spell(v))
	})
}
