package lint

// Which code can reset the gradients of a training loop (TM004).
//
// A file that resets gradients somewhere may still hold a loop that never
// does (a second fine-tuning function without zero_grad). The file is split
// into units: a top-level class (its methods share the optimizer through
// self, and hooks call them by framework conventions), a top-level function
// with everything nested in it, and the module body. Units are linked when
// one names the other (a call, or a function passed as a callback), and a
// loop lacks a reset when no unit linked to its own, directly or not, resets.

// unitOf is the outermost class or function around n (nil: module body).
func unitOf(n *Node) *Node {
	var u *Node
	for p := n.Parent; p != nil; p = p.Parent {
		if isFunc(p) || p.Is("ClassDef") {
			u = p
		}
	}
	return u
}

// resetUnits returns whether the unit of a loop, with every unit linked to
// it, lacks a gradient reset.
func (f *file) resetUnits() func(loop *Node) bool {
	parent := map[*Node]*Node{} // union-find over units; nil is the module
	var find func(u *Node) *Node
	find = func(u *Node) *Node {
		p, ok := parent[u]
		if !ok || p == u {
			return u
		}
		r := find(p)
		parent[u] = r
		return r
	}
	union := func(a, b *Node) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[ra] = rb
		}
	}
	defs := map[string][]*Node{} // name of a function, method or class -> its unit
	for _, d := range f.nodes("FunctionDef", "AsyncFunctionDef", "ClassDef") {
		u := unitOf(d)
		if u == nil { // d is top-level: its own unit
			u = d
		}
		defs[d.S("name")] = append(defs[d.S("name")], u)
	}
	link := func(n *Node, name string) {
		for _, u := range defs[name] {
			union(unitOf(n), u)
		}
	}
	for _, n := range f.nodes("Name") {
		link(n, n.S("id"))
	}
	for _, a := range f.nodes("Attribute") {
		link(a, a.S("attr"))
	}
	resets := map[*Node]bool{}
	for _, a := range f.nodes("Attribute") {
		if isGradReset(a) {
			resets[find(unitOf(a))] = true
		}
	}
	return func(loop *Node) bool { return !resets[find(unitOf(loop))] }
}
