package lint

import (
	"strings"
)

// TM008: x.data = <tensor computed from x>.

func checkTM008(f *file) {
	scopes := append([]*Node{f.mod}, f.nodes("FunctionDef", "AsyncFunctionDef")...)
	for _, sc := range scopes {
		var deps map[string]map[string]bool
		walkScope(sc, func(n *Node) {
			if !n.Is("Assign") || len(n.L("targets")) != 1 {
				return
			}
			tg := n.L("targets")[0]
			if !tg.Is("Attribute") || tg.S("attr") != "data" {
				return
			}
			owner := dotted(tg.K("value"))
			if owner == "" || owner == "self" || owner == "cls" || f.gradOff(n) {
				return // self.data = ...: an object's attribute, not a tensor's storage
			}
			if isCastOf(n.K("value"), owner) {
				return // p.data = p.to(torch.float32): a cast's graph saves no tensor
			}
			if deps == nil {
				deps = f.scopeDeps(sc)
			}
			for r := range f.liveRefs(n.K("value")) {
				if r == owner || deps[r][owner] {
					f.report(n, "TM008", "tm008.data", owner)
					return
				}
			}
		})
	}
}

// castMethods only change a tensor's dtype, device or layout.
var castMethods = map[string]bool{"to": true, "float": true, "half": true, "double": true,
	"bfloat16": true, "type": true, "cuda": true, "cpu": true, "contiguous": true}

// isCastOf reports e = owner.to(...).float()...: a chain of casts of owner
// and nothing else. Autograd records ToCopyBackward, which saves no tensor.
func isCastOf(e *Node, owner string) bool {
	seen := false
	for {
		recv, m := methodCall(e)
		if recv == nil || !castMethods[m] {
			return seen && dotted(e) == owner
		}
		seen = true
		e = recv
	}
}

var arithMethods = map[string]bool{"mul": true, "add": true, "sub": true, "div": true, "pow": true}

// liveRefs lists the names an expression computes with as tensors: operands
// of arithmetic, arguments of torch.* functions, receivers of
// graph-keeping tensor methods; never through .data, .grad, .detach() or
// an unknown call (self.load() says nothing about self being a tensor).
func (f *file) liveRefs(e *Node) map[string]bool {
	out := map[string]bool{}
	var visit func(n *Node)
	visit = func(n *Node) {
		switch n.TypeOr() {
		case "Name":
			out[n.S("id")] = true
		case "Attribute":
			switch n.S("attr") {
			case "data", "grad", "shape", "dtype", "device":
				return
			}
			if k := dotted(n); k != "" {
				out[k] = true
			}
		case "BinOp":
			visit(n.K("left"))
			visit(n.K("right"))
		case "UnaryOp":
			visit(n.K("operand"))
		case "IfExp":
			visit(n.K("body"))
			visit(n.K("orelse"))
		case "Subscript", "Starred":
			visit(n.K("value"))
		case "Call":
			recv, m := methodCall(n)
			q := f.qualify(n.K("func"))
			switch {
			case strings.HasPrefix(q, "torch.") && !cleanTorchFuncs[lastName(n.K("func"))]:
				for _, a := range n.L("args") {
					visit(a)
				}
			case recv != nil && keepMethods[m]:
				visit(recv)
				if arithMethods[m] { // a.mul(b) computes with b; view_as(p) only reads p's shape
					for _, a := range n.L("args") {
						visit(a)
					}
				}
			}
		}
	}
	visit(e)
	return out
}

// scopeDeps maps each name assigned in scope to every name its value was
// (transitively) computed from through autograd.
func (f *file) scopeDeps(sc *Node) map[string]map[string]bool {
	deps := map[string]map[string]bool{}
	walkScope(sc, func(n *Node) {
		if !n.Is("Assign") {
			return
		}
		refs := f.liveRefs(n.K("value"))
		for _, tg := range n.L("targets") {
			if k := dotted(tg); k != "" && tg.Is("Name", "Attribute") && (!tg.Is("Attribute") || tg.S("attr") != "data") {
				if deps[k] == nil {
					deps[k] = map[string]bool{}
				}
				for r := range refs {
					deps[k][r] = true
				}
			}
		}
	})
	for changed, rounds := true, 0; changed && rounds < 5; rounds++ {
		changed = false
		for _, d := range deps {
			for r := range d {
				for rr := range deps[r] {
					if !d[rr] {
						d[rr] = true
						changed = true
					}
				}
			}
		}
	}
	return deps
}
