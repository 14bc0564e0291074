package lint

import "strings"

// When `with torch.no_grad():` may become `with torch.inference_mode():`.
// Tensors made under inference mode can never be used by autograd later
// ("Inference tensors cannot be saved for backward") nor updated in place
// outside it, so the rewrite is made only when nothing made in the block
// can outlive it as a tensor:
//
//   - the block is in a function that evaluates: named for evaluation
//     (evaluate, validate, test, predict, infer…) or calling .eval() before it;
//   - every call in the block is a model or loss call, a torch function
//     that is not in-place, a known pure tensor method, or a builtin;
//   - nothing is stored into an attribute, a subscript, a container
//     (append, update…), yielded or returned, except Python numbers
//     (.item(), .tolist(), float(), len());
//   - a name the block binds and the rest of the function reads is bound
//     only to such numbers (test_loss += loss.item());
//   - no nested function, class, global, await, or other with than autocast.
//
// The MNIST example's test() passes; anything unusual keeps no_grad.

var inferenceEvalWords = []string{"eval", "evaluate", "evaluation", "validate", "validation", "val", "valid",
	"test", "predict", "prediction", "infer", "inference"}

// pureMethods are tensor (and dict) methods that neither store their
// receiver anywhere nor change it in place.
var pureMethods = map[string]bool{
	"to": true, "cpu": true, "cuda": true, "float": true, "half": true, "double": true, "long": true,
	"int": true, "bool": true, "view": true, "reshape": true, "squeeze": true, "unsqueeze": true,
	"permute": true, "transpose": true, "contiguous": true, "flatten": true, "sum": true, "mean": true,
	"max": true, "min": true, "argmax": true, "argmin": true, "softmax": true, "log_softmax": true,
	"sigmoid": true, "eq": true, "ne": true, "gt": true, "lt": true, "ge": true, "le": true,
	"view_as": true, "item": true, "tolist": true, "numpy": true, "size": true, "dim": true,
	"detach": true, "clone": true, "topk": true, "sort": true, "exp": true, "log": true, "abs": true,
	"sqrt": true, "pow": true, "mul": true, "add": true, "sub": true, "div": true, "type_as": true,
	"expand": true, "expand_as": true, "chunk": true, "split": true, "round": true, "norm": true,
	"std": true, "var": true, "numel": true, "any": true, "all": true, "masked_fill": true,
	"repeat": true, "index_select": true, "gather": true, "format": true, "items": true, "keys": true,
	"values": true, "get": true, "eval": true, "float16": true, "bfloat16": true,
}

var pureBuiltins = map[string]bool{
	"len": true, "float": true, "int": true, "round": true, "range": true, "enumerate": true,
	"zip": true, "print": true, "min": true, "max": true, "sum": true, "abs": true, "str": true,
	"isinstance": true, "bool": true, "tqdm": true,
}

// inferenceSafe reports whether the with-block w can run under
// inference_mode (see above).
func (f *file) inferenceSafe(w *Node) bool {
	fn := enclosingFunc(w)
	if fn == nil || !fn.Is("FunctionDef") || !f.evaluates(fn, w) {
		return false
	}
	safe := true
	w.Walk(func(n *Node) bool {
		if !safe || n == w {
			return safe
		}
		safe = f.inferenceSafeNode(n)
		return safe
	})
	return safe && f.bindingsStayInside(fn, w)
}

// evaluates: fn is named for evaluation, or calls .eval() before w.
func (f *file) evaluates(fn, w *Node) bool {
	if anyToken(wordTokens(fn.S("name")), inferenceEvalWords...) {
		return true
	}
	return findInScope(fn, func(n *Node) bool {
		_, m := methodCall(n)
		return m == "eval" && len(n.L("args")) == 0 && n.Line < w.Line
	}) != nil
}

func (f *file) inferenceSafeNode(n *Node) bool {
	switch n.Type {
	case "FunctionDef", "AsyncFunctionDef", "Lambda", "ClassDef", "Yield", "YieldFrom", "Global",
		"Nonlocal", "Await", "AsyncWith", "AsyncFor", "Delete":
		return false
	case "With":
		for _, it := range n.L("items") {
			if lastName(it.K("context_expr").K("func")) != "autocast" {
				return false
			}
		}
	case "Return":
		return n.K("value") == nil || isNumberExpr(n.K("value"))
	case "Assign", "AugAssign", "AnnAssign":
		targets := n.L("targets")
		if !n.Is("Assign") {
			targets = []*Node{n.K("target")}
		}
		for _, t := range targets {
			stored := false
			t.Walk(func(x *Node) bool {
				stored = stored || x.Is("Attribute", "Subscript") && isStoreTarget(x)
				return !stored
			})
			if stored && !isNumberExpr(n.K("value")) {
				return false
			}
		}
	case "Call":
		return f.pureCall(n)
	}
	return true
}

// isStoreTarget: x is the target itself or an element of a target tuple,
// not an expression inside one (a[i] in x[a[i]] = ...).
func isStoreTarget(x *Node) bool {
	for c := x; c != nil; c = c.Parent {
		switch c.Field {
		case "targets", "target":
			return true
		case "elts":
			continue
		default:
			if !c.Parent.Is("Tuple", "List", "Starred") {
				return false
			}
		}
	}
	return false
}

// pureCall: a call that neither keeps its arguments nor changes them.
func (f *file) pureCall(call *Node) bool {
	if f.isModelCall(call) || f.isLossCall(call) {
		return true
	}
	fn := call.K("func")
	if fn.Is("Name") {
		return pureBuiltins[fn.S("id")]
	}
	q := f.qualify(fn)
	last := lastName(fn)
	if strings.HasPrefix(q, "torch.") {
		return !strings.HasSuffix(last, "_") && !strings.Contains(q, "autograd") &&
			last != "enable_grad" && last != "set_grad_enabled" && last != "save"
	}
	_, m := methodCall(call)
	return pureMethods[m]
}

// isNumberExpr: a constant, .item(), .tolist(), float()/int()/len()/round(),
// or arithmetic over those.
func isNumberExpr(v *Node) bool {
	switch v.TypeOr() {
	case "Constant":
		return true
	case "BinOp":
		return isNumberExpr(v.K("left")) && isNumberExpr(v.K("right"))
	case "UnaryOp":
		return isNumberExpr(v.K("operand"))
	case "Call":
		if _, m := methodCall(v); m == "item" || m == "tolist" {
			return true
		}
		if fn := v.K("func"); fn.Is("Name") {
			switch fn.S("id") {
			case "float", "int", "len", "round", "bool":
				return true
			}
		}
	}
	return false
}

// bindingsStayInside: every name bound in w and read elsewhere in fn is
// bound in w only to Python numbers.
func (f *file) bindingsStayInside(fn, w *Node) bool {
	bound := map[string]bool{}  // names w binds
	tensor := map[string]bool{} // ... to something that may be a tensor
	w.Walk(func(n *Node) bool {
		var targets []*Node
		var value *Node
		switch n.Type {
		case "Assign":
			targets, value = n.L("targets"), n.K("value")
		case "AugAssign", "AnnAssign":
			targets, value = []*Node{n.K("target")}, n.K("value")
		case "For":
			targets = []*Node{n.K("target")}
		case "withitem":
			targets = []*Node{n.K("optional_vars")}
		case "NamedExpr":
			targets, value = []*Node{n.K("target")}, n.K("value")
		}
		for _, t := range targets {
			t.Walk(func(x *Node) bool {
				if x.Is("Name") {
					bound[x.S("id")] = true
					if value == nil || !isNumberExpr(value) {
						tensor[x.S("id")] = true
					}
				}
				return x.Is("Tuple", "List", "Starred", "Name")
			})
		}
		return true
	})
	leaks := false
	walkScope(fn, func(n *Node) {
		if n.Is("Name") && tensor[n.S("id")] && n != w && !under(n, w) {
			leaks = true
		}
	})
	return !leaks
}
