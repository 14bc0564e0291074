package lint

import "fmt"

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
			if owner == "" || f.gradOff(n) {
				return
			}
			if deps == nil {
				deps = scopeDeps(sc)
			}
			for r := range liveRefs(n.K("value")) {
				if r == owner || deps[r][owner] {
					f.report(n, "TM008", fmt.Sprintf(
						"%s.data is assigned a tensor computed from %s with autograd on: the two are linked in a reference cycle that only the cycle collector frees", owner, owner))
					return
				}
			}
		})
	}
}

// liveRefs lists the names an expression reads through autograd: not
// under .data, .detach(), .item() or .grad.
func liveRefs(e *Node) map[string]bool {
	out := map[string]bool{}
	var visit func(n *Node)
	visit = func(n *Node) {
		switch n.TypeOr() {
		case "":
			return
		case "Name":
			out[n.S("id")] = true
			return
		case "Attribute":
			switch n.S("attr") {
			case "data", "grad", "shape", "dtype", "device":
				return
			}
			if k := dotted(n); k != "" {
				out[k] = true
			}
		case "Call":
			if _, m := methodCall(n); m == "detach" || m == "item" || m == "numel" || m == "size" {
				return
			}
		case "Lambda", "FunctionDef":
			return
		}
		for _, c := range n.kids {
			visit(c)
		}
	}
	visit(e)
	return out
}

// scopeDeps maps each name assigned in scope to every name its value was
// (transitively) computed from through autograd.
func scopeDeps(sc *Node) map[string]map[string]bool {
	deps := map[string]map[string]bool{}
	walkScope(sc, func(n *Node) {
		if !n.Is("Assign") {
			return
		}
		refs := liveRefs(n.K("value"))
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
