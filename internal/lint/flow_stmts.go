package lint

// Statement walk of the taint pass: statements in source order, compound
// statements entered, nested functions and classes left to their own pass.

func (fl *flow) stmts(list []*Node) {
	if !fl.started && len(list) > 0 {
		fl.started = true
		fl.startScope(enclosingFunc(list[0]))
	}
	for _, s := range list {
		fl.stmt(s)
	}
}

func (fl *flow) stmt(s *Node) {
	switch s.TypeOr() {
	case "Assign":
		fl.assign(s, s.L("targets"), s.K("value"))
	case "AnnAssign":
		if s.K("value") != nil {
			fl.assign(s, []*Node{s.K("target")}, s.K("value"))
		}
	case "AugAssign":
		fl.augAssign(s)
	case "Expr":
		fl.exprStmt(s)
	case "Return":
		if fl.sum != nil && s.K("value") != nil {
			fl.sum.ret = fl.sum.ret.or(fl.expr(s.K("value")))
		}
	case "For", "AsyncFor":
		fl.setTargets(s.K("target"), taint{})
		fl.stmts(s.L("body"))
		fl.stmts(s.L("orelse"))
	case "While":
		fl.stmts(s.L("body"))
		fl.stmts(s.L("orelse"))
	case "If":
		fl.stmts(s.L("body"))
		fl.stmts(s.L("orelse"))
	case "With", "AsyncWith":
		for _, it := range s.L("items") {
			fl.setTargets(it.K("optional_vars"), taint{})
		}
		fl.stmts(s.L("body"))
	case "Try", "TryStar":
		fl.stmts(s.L("body"))
		for _, h := range s.L("handlers") {
			fl.stmts(h.L("body"))
		}
		fl.stmts(s.L("orelse"))
		fl.stmts(s.L("finalbody"))
	case "Match":
		for _, c := range s.L("cases") {
			fl.stmts(c.L("body"))
		}
	}
}

func (fl *flow) assign(s *Node, targets []*Node, value *Node) {
	t := fl.expr(value)
	fl.calleeEffects(s, value)
	for _, tg := range targets {
		// total = total + loss
		if k := dotted(tg); k != "" && value.Is("BinOp") && value.K("op").Is("Add") {
			l, r := value.K("left"), value.K("right")
			if dotted(l) == k {
				fl.accum(s, k, fl.expr(r), false)
			} else if dotted(r) == k {
				fl.accum(s, k, fl.expr(l), false)
			}
		}
		if tg.Is("Tuple", "List") && fl.f.isLossCall(value) && len(tg.L("elts")) > 1 {
			// loss, loss_items = compute_loss(...): the extra values are
			// usually detached logging copies; only the loss is known.
			fl.setTargets(tg.L("elts")[0], fl.forBackward(tg.L("elts")[0], value, t))
			for _, e := range tg.L("elts")[1:] {
				fl.setTargets(e, fl.forBackward(e, value, taint{}))
			}
			continue
		}
		fl.setTargets(tg, fl.forBackward(tg, value, t))
	}
}

// forBackward: a name that is .backward()'d in this scope holds history
// whatever computed it (loss = compute_loss(model, batch)), unless the value
// is plainly a number or a detached copy.
func (fl *flow) forBackward(tg, value *Node, t taint) taint {
	if fl.backward[dotted(tg)] && !fl.f.gradOff(tg) && !isConversion(value) {
		t.hist = true
	}
	return t
}

// isConversion: a constant, float(x), x.item(), x.detach() and the like.
func isConversion(v *Node) bool {
	switch v.TypeOr() {
	case "Constant":
		return true
	case "Call":
		if _, m := methodCall(v); m == "item" || m == "detach" || m == "tolist" || m == "numpy" {
			return true
		}
		switch lastName(v.K("func")) {
		case "float", "int", "round", "len":
			return v.K("func").Is("Name")
		}
	}
	return false
}

func (fl *flow) setTargets(tg *Node, t taint) {
	switch tg.TypeOr() {
	case "Name", "Attribute":
		fl.state[dotted(tg)] = t
	case "Tuple", "List":
		for _, e := range tg.L("elts") {
			fl.setTargets(e, t)
		}
	case "Starred":
		fl.setTargets(tg.K("value"), t)
	}
}

func (fl *flow) augAssign(s *Node) {
	tg, value := s.K("target"), s.K("value")
	t := fl.expr(value)
	if s.K("op").Is("Add", "Sub") {
		if k := baseKey(tg); k != "" {
			fl.accum(s, k, t, value.Is("List"))
		}
	}
	if k := dotted(tg); k != "" && tg.Is("Name", "Attribute") {
		fl.state[k] = fl.state[k].or(t)
	}
}

// exprStmt catches acc.append(x) / acc.extend([x]) / acc[k].append(x).
func (fl *flow) exprStmt(s *Node) {
	call := s.K("value")
	fl.calleeEffects(s, call)
	recv, m := methodCall(call)
	if (m != "append" && m != "extend") || len(call.L("args")) != 1 {
		return
	}
	k := baseKey(recv)
	if k == "" {
		return
	}
	arg := call.L("args")[0]
	fl.accum(s, k, fl.expr(arg), true)
}
