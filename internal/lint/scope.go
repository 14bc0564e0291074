package lint

// Scope questions answered by walking parent links: which function and loops
// enclose a node, and whether autograd is off where it runs.

func isFunc(n *Node) bool { return n.Is("FunctionDef", "AsyncFunctionDef", "Lambda") }

func isLoop(n *Node) bool { return n.Is("For", "AsyncFor", "While") }

// enclosingFunc is the innermost function around n (nil at module level).
func enclosingFunc(n *Node) *Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if isFunc(p) {
			return p
		}
	}
	return nil
}

// enclosingClass is the class a method n belongs to (nil otherwise).
func enclosingClass(n *Node) *Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Is("ClassDef") {
			return p
		}
	}
	return nil
}

// loopsOf lists, innermost first, the loops whose body repeats n, within
// n's own function. A for's iterable and else clause run once, so they do
// not count.
func loopsOf(n *Node) []*Node {
	var out []*Node
	for c, p := n, n.Parent; p != nil; c, p = p, p.Parent {
		if isFunc(p) || p.Is("ClassDef") {
			break
		}
		if isLoop(p) && c.Field == "body" {
			out = append(out, p)
		}
	}
	return out
}

// underLoop reports whether anc is one of the ancestors of n.
func under(n, anc *Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p == anc {
			return true
		}
	}
	return false
}

// walkScope visits the nodes under n that run in n's own function, skipping
// nested function and class bodies (they run at another time).
func walkScope(n *Node, fn func(*Node)) {
	for _, c := range n.kids {
		c.Walk(func(x *Node) bool {
			if isFunc(x) || x.Is("ClassDef") {
				return false
			}
			fn(x)
			return true
		})
	}
}

// findInScope returns the first node under n, in walkScope's order, for
// which pred holds (nil when none does); the walk stops there.
func findInScope(n *Node, pred func(*Node) bool) *Node {
	var hit *Node
	for _, c := range n.kids {
		c.Walk(func(x *Node) bool {
			if hit != nil || isFunc(x) || x.Is("ClassDef") {
				return false
			}
			if pred(x) {
				hit = x
			}
			return hit == nil
		})
		if hit != nil {
			break
		}
	}
	return hit
}

// gradOffExpr reports a context manager or decorator that turns autograd
// off: no_grad / inference_mode (with or without the call parentheses, any
// alias spelling) and set_grad_enabled(x) for anything but a literal True,
// such as the common set_grad_enabled(phase == "train").
func gradOffExpr(e *Node) bool {
	switch e.TypeOr() {
	case "IfExp": // torch.no_grad() if evaluating else nullcontext()
		return gradOffExpr(e.K("body")) || gradOffExpr(e.K("orelse"))
	case "Name", "Attribute":
		switch lastName(e) {
		case "no_grad", "inference_mode":
			return true
		}
	case "Call":
		f := e.K("func")
		switch lastName(f) {
		case "no_grad":
			return true
		case "inference_mode":
			if len(e.L("args")) > 0 {
				if v, ok := constBool(e.L("args")[0]); ok && !v {
					return false
				}
			}
			if v, ok := constBool(kwarg(e, "mode")); ok && !v {
				return false
			}
			return true
		case "set_grad_enabled":
			args := e.L("args")
			if len(args) == 0 {
				return false
			}
			v, ok := constBool(args[0])
			return !(ok && v)
		}
	}
	return false
}

// gradOffLocal reports whether autograd is off at n because of an enclosing
// with-block, a decorator of an enclosing function, or an earlier
// set_grad_enabled(False) statement in the same function.
func (f *file) gradOffLocal(n *Node) bool {
	for c, p := n, n.Parent; p != nil; c, p = p, p.Parent {
		switch {
		case p.Is("With", "AsyncWith") && c.Field == "body":
			for _, it := range p.L("items") {
				if ce := it.K("context_expr"); gradOffExpr(ce) || f.gradOffVar(ce) {
					return true
				}
			}
		case p.Is("FunctionDef", "AsyncFunctionDef"):
			for _, d := range p.L("decorator_list") {
				if gradOffExpr(d) {
					return true
				}
			}
		}
	}
	return f.gradOffStatementBefore(n)
}

// gradOffStatementBefore finds set_grad_enabled(False) called as a
// statement earlier in n's function, or anywhere at module level: inference
// scripts switch autograd off once, and the functions they call later run
// without it.
func (f *file) gradOffStatementBefore(n *Node) bool {
	scope := enclosingFunc(n)
	if scope == nil {
		scope = f.mod
	}
	for _, l := range f.gradOffStmtLines(scope) {
		if l < n.Line {
			return true
		}
	}
	return scope != f.mod && len(f.gradOffStmtLines(f.mod)) > 0
}

// gradOffStmtLines lists the lines of set_grad_enabled(False) statements
// in scope (cached per scope).
func (f *file) gradOffStmtLines(scope *Node) []int {
	lines, ok := f.gradOffLines[scope]
	if ok {
		return lines
	}
	walkScope(scope, func(x *Node) {
		if !x.Is("Expr") {
			return
		}
		call := x.K("value")
		if lastName(call.K("func")) == "set_grad_enabled" && gradOffExpr(call) {
			lines = append(lines, x.Line)
		}
	})
	f.gradOffLines[scope] = lines
	return lines
}

// gradOff is gradOffLocal, or n's function is called somewhere in the
// project with autograd off (evaluate(...) inside "with torch.no_grad()").
func (f *file) gradOff(n *Node) bool {
	if f.gradOffLocal(n) {
		return true
	}
	for fn := enclosingFunc(n); fn != nil; fn = enclosingFunc(fn) {
		if name := funcName(fn); name != "" && f.proj.noGradCallees[name] {
			return true
		}
	}
	return false
}

// funcName is the name of a def ("" for lambdas and module level).
func funcName(fn *Node) string {
	if fn == nil {
		return ""
	}
	return fn.S("name")
}

// innermostLoop is loopsOf(n)[0], or nil when no loop repeats n.
func innermostLoop(n *Node) *Node {
	if l := loopsOf(n); len(l) > 0 {
		return l[0]
	}
	return nil
}

// gradOffVar: `with ctx:` where the file binds ctx to an expression that
// may switch autograd off (ctx = torch.no_grad() if not train else
// nullcontext()).
func (f *file) gradOffVar(e *Node) bool {
	if !e.Is("Name", "Attribute") {
		return false
	}
	key := dotted(e)
	for _, a := range f.nodes("Assign") {
		for _, t := range a.L("targets") {
			if dotted(t) != key {
				continue
			}
			found := false
			a.K("value").Walk(func(n *Node) bool {
				found = found || gradOffExpr(n)
				return !found
			})
			if found {
				return true
			}
		}
	}
	return false
}
