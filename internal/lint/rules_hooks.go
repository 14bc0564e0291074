package lint

// TM015: module hooks that store activations or gradients with their graph.

var hookKinds = map[string]string{
	"register_forward_hook":       "forward",
	"register_full_backward_hook": "backward",
	"register_backward_hook":      "backward",
}

func checkTM015(f *file) {
	for _, call := range f.nodes("Call") {
		_, m := methodCall(call)
		kind, ok := hookKinds[m]
		if !ok {
			continue
		}
		arg := kwarg(call, "hook")
		if arg == nil {
			arg = firstArg(call)
		}
		for _, fn := range f.hookFuncs(arg, 0) {
			f.checkHook(fn, kind)
		}
	}
}

// hookFuncs resolves the callable passed as a hook: a lambda, a function or
// method defined in the file, partial(fn, ...), or a factory call such as
// get_activation("fc") whose nested function is the hook.
func (f *file) hookFuncs(arg *Node, depth int) []*Node {
	if depth > 2 {
		return nil
	}
	switch arg.TypeOr() {
	case "Lambda":
		return []*Node{arg}
	case "Name", "Attribute":
		return f.defsNamed(lastName(arg))
	case "Call":
		fn := arg.K("func")
		if lastName(fn) == "partial" && len(arg.L("args")) > 0 {
			return f.hookFuncs(arg.L("args")[0], depth+1)
		}
		var out []*Node
		for _, factory := range f.defsNamed(lastName(fn)) {
			for _, s := range factory.L("body") {
				if s.Is("FunctionDef") {
					out = append(out, s)
				}
			}
		}
		return out
	}
	return nil
}

func (f *file) defsNamed(name string) []*Node {
	var out []*Node
	for _, fn := range f.nodes("FunctionDef") {
		if name != "" && fn.S("name") == name {
			out = append(out, fn)
		}
	}
	return out
}

// hookTensorParams names the hook's tensor parameters: (input, output) of
// a forward hook, (grad_input, grad_output) of a backward hook.
func hookTensorParams(fn *Node) map[string]bool {
	params := fn.K("args").L("args")
	if len(params) > 0 && params[0].S("arg") == "self" {
		params = params[1:]
	}
	out := map[string]bool{}
	for i, p := range params {
		if i == 1 || i == 2 {
			out[p.S("arg")] = true
		}
	}
	return out
}

// rawParam: e is a hook tensor parameter (or an item, attribute or
// graph-keeping method result of one), not detached.
func rawParam(e *Node, params map[string]bool) bool {
	switch e.TypeOr() {
	case "Name":
		return params[e.S("id")]
	case "Subscript", "Starred", "Attribute":
		if e.Is("Attribute") && (e.S("attr") == "data" || cleanAttrs[e.S("attr")]) {
			return false
		}
		return rawParam(e.K("value"), params)
	case "Call":
		recv, m := methodCall(e)
		return recv != nil && keepMethods[m] && rawParam(recv, params)
	}
	return false
}

func (f *file) checkHook(fn *Node, kind string) {
	params := hookTensorParams(fn)
	if len(params) == 0 {
		return
	}
	walkScope(fn, func(n *Node) {
		recv, m := methodCall(n)
		if (m == "append" || m == "extend") && len(n.L("args")) == 1 && rawParam(n.L("args")[0], params) {
			key := baseKey(recv)
			if key != "" && !assignedIn(fn, key) && !f.clearedAnywhere(key) {
				f.report(n, "TM015", "tm015.appends."+kind, key)
			}
			return
		}
		if kind == "backward" && n.Is("Assign") && rawParam(n.K("value"), params) {
			for _, t := range n.L("targets") {
				if t.Is("Attribute", "Subscript") {
					f.report(n, "TM015", "tm015.stores_grad")
					return
				}
			}
		}
	})
}

// clearedAnywhere: the list is emptied or re-bound somewhere in the file
// (.clear(), del x[:], or assigned more than once).
func (f *file) clearedAnywhere(key string) bool {
	assigns := 0
	for _, a := range f.nodes("Assign") {
		for _, t := range a.L("targets") {
			if dotted(t) == key {
				assigns++
			}
		}
	}
	if assigns > 1 {
		return true
	}
	for _, call := range f.nodes("Call") {
		if recv, m := methodCall(call); (m == "clear" || m == "pop") && dotted(recv) == key {
			return true
		}
	}
	for _, d := range f.nodes("Delete") {
		for _, t := range d.L("targets") {
			if baseKey(t) == key {
				return true
			}
		}
	}
	return false
}
