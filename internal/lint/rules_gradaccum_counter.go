package lint

// TM020: gradient accumulation whose loss is never scaled, in the loops
// TM003 does not read (its condition is `step % accum_steps`). The
// simplest accumulation loop counts batches by hand:
//
//	for x, y in loader:
//	    loss = criterion(model(x), y)
//	    loss.backward()                 # TM020: summed, never divided
//	    count += 1
//	    if count == accum:
//	        optimizer.step()
//	        optimizer.zero_grad()
//	        count = 0

func checkTM020(f *file) {
	checkTM020InnerLoops(f) // rules_gradaccum_inner.go
	for _, ifn := range f.nodes("If") {
		loops := loopsOf(ifn)
		if len(loops) == 0 || ifn.Parent != loops[0] || tm003Condition(ifn.K("test")) {
			continue
		}
		loop := loops[0]
		body := ifn.L("body")
		if !bodyHas(body, f.isOptimStep) || hasBackward(body) || zeroesOutside(loop, ifn) ||
			!bodyHas(body, func(n *Node) bool { _, m := methodCall(n); return m == "zero_grad" }) {
			continue
		}
		count := counterCompare(ifn.K("test"), loop)
		if count == "" {
			continue
		}
		backward := ownBackward(loop, ifn)
		if backward == nil || lossScaled(loop, backward) || accumulateContext(loop) {
			continue
		}
		f.report(backward, "TM020", "tm020.counter", spellTest(ifn.K("test")), ifn.Line)
	}
}

// tm003Condition: a modulus TM003 checks itself.
func tm003Condition(test *Node) bool {
	for _, v := range modRight(test) {
		n, isConst := constInt(v)
		if v.Is("Name", "Attribute") && accumNameRe.MatchString(lastName(v)) || isConst && n >= 2 {
			return true
		}
	}
	return false
}

// counterCompare returns the counter of `count == n` / `count >= n` /
// `i % n == 0` when the counter is incremented in the loop or is the
// loop's own index, else "".
func counterCompare(test, loop *Node) string {
	if !test.Is("Compare") || len(test.L("ops")) != 1 || !test.L("ops")[0].Is("Eq", "GtE") {
		return ""
	}
	left := test.K("left")
	if left.Is("BinOp") && left.K("op").Is("Mod") {
		left = left.K("left")
	}
	if left.Is("BinOp") && left.K("op").Is("Add") { // (i + 1)
		left = left.K("left")
	}
	key := dotted(left)
	if key == "" || !left.Is("Name", "Attribute") {
		return ""
	}
	incremented := findInScope(loop, func(n *Node) bool {
		return n.Is("AugAssign") && n.K("op").Is("Add") && dotted(n.K("target")) == key
	}) != nil
	if incremented || loopIndex(loop, key) {
		return key
	}
	return ""
}

// loopIndex: key is bound by the loop header (for i, batch in enumerate(...)).
func loopIndex(loop *Node, key string) bool {
	if !loop.Is("For", "AsyncFor") {
		return false
	}
	for _, n := range flatNames(loop.K("target")) {
		if n == key {
			return true
		}
	}
	return false
}

// ownBackward is the loop's backward outside the if, or nil.
func ownBackward(loop, ifn *Node) *Node {
	return findInScope(loop, func(n *Node) bool {
		_, ok := backwardOf(n)
		return ok && !under(n, ifn)
	})
}

// lossScaled: the backpropagated tensor is divided or multiplied on its
// way: `(loss / n).backward()`, `loss = loss / n`, `loss /= n`, or the
// loss expression itself divides.
func lossScaled(loop, backward *Node) bool {
	t, _ := backwardOf(backward)
	scales := func(e *Node) bool {
		found := false
		e.Walk(func(n *Node) bool {
			found = found || n.Is("BinOp") && n.K("op").Is("Div", "Mult", "FloorDiv")
			return !found
		})
		return found
	}
	if scales(t) {
		return true
	}
	key := dotted(t)
	return key != "" && findInScope(loop, func(n *Node) bool {
		switch {
		case n.Is("AugAssign"):
			return dotted(n.K("target")) == key && n.K("op").Is("Div", "Mult")
		case n.Is("Assign"):
			for _, tg := range n.L("targets") {
				if dotted(tg) == key && scales(n.K("value")) {
					return true
				}
			}
		}
		return false
	}) != nil
}

// spellTest writes a short condition back: "count == accum".
func spellTest(test *Node) string {
	ops := map[string]string{"Eq": "==", "GtE": ">="}
	left, right := test.K("left"), lastOf(test.L("comparators"))
	l := dotted(left)
	if left.Is("BinOp") {
		l = "… % " + spell(left.K("right"))
	}
	return l + " " + ops[test.L("ops")[0].Type] + " " + spell(right)
}
