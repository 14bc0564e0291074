package lint

// TM020, the inner-loop form of gradient accumulation (nanoGPT#206):
//
//	for iter_num in range(max_iters):
//	    for micro_step in range(gradient_accumulation_steps):
//	        logits, loss = model(X, Y)
//	        loss.backward()               # summed over the micro-steps
//	    optimizer.step()

// checkTM020InnerLoops reports a backward in a `for … in range(accum)` loop
// that the optimizer steps after, when the loss is never divided.
func checkTM020InnerLoops(f *file) {
	for _, inner := range f.nodes("For") {
		it := inner.K("iter")
		if !it.Is("Call") || dotted(it.K("func")) != "range" || len(it.L("args")) != 1 {
			continue
		}
		if n := it.L("args")[0]; !n.Is("Name", "Attribute") || !accumNameRe.MatchString(lastName(n)) {
			continue
		}
		if bodyHas(inner.L("body"), f.isOptimStep) || !stepsAfter(f, inner) {
			continue
		}
		backward := findInScope(inner, func(n *Node) bool { _, ok := backwardOf(n); return ok })
		if backward == nil || lossScaled(inner, backward) || accumulateContext(inner) {
			continue
		}
		f.report(backward, "TM020", "tm020.inner", inner.Line, spell(it.L("args")[0]))
	}
}

// stepsAfter reports an optimizer step among the statements that follow
// loop in its enclosing block.
func stepsAfter(f *file, loop *Node) bool {
	after := false
	for _, s := range loop.Parent.L(loop.Field) {
		if s == loop {
			after = true
			continue
		}
		if after && bodyHas([]*Node{s}, f.isOptimStep) {
			return true
		}
	}
	return false
}
