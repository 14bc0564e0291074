package lint

// DataLoaders the literal DataLoader(...) call does not show: project
// subclasses (class FastLoader(DataLoader)), num_workers passed in a dict
// (DataLoader(ds, **loader_kwargs), the MNIST example's
// train_kwargs.update(cuda_kwargs)) or through a wrapper's **kwargs
// (make_loader(ds, num_workers=4) -> DataLoader(ds, **kwargs)), and
// datasets handed to such a wrapper as a parameter.

// findLoaderClasses marks project classes deriving from DataLoader.
func (p *project) findLoaderClasses() {
	for changed, rounds := true, 0; changed && rounds < 6; rounds++ {
		changed = false
		for name, refs := range p.classDefs {
			if p.loaderClasses[name] {
				continue
			}
			for _, r := range refs {
				for _, b := range r.fn.L("bases") {
					if l := lastName(b); l == "DataLoader" || p.loaderClasses[l] {
						p.loaderClasses[name] = true
						changed = true
					}
				}
			}
		}
	}
}

// isLoaderCall reports DataLoader(...) or a call of a project subclass.
func (f *file) isLoaderCall(call *Node) bool {
	return isDataLoader(call) || call.Is("Call") && f.proj.loaderClasses[lastName(call.K("func"))]
}

// loaderWorkersOn reports a loader that uses worker processes: num_workers
// given and not a literal 0, directly, in a **dict, through the enclosing
// function's **kwargs at its call sites, or fixed by a subclass's
// super().__init__(..., num_workers=N).
func (f *file) loaderWorkersOn(call *Node) bool {
	if workersOn(call) {
		return true
	}
	if nw := numWorkers(call); nw != nil {
		return false // an explicit 0
	}
	for _, k := range call.L("keywords") {
		if k.S("arg") == "" && f.dictWorkersOn(call, k.K("value"), 0) {
			return true
		}
	}
	if name := lastName(call.K("func")); f.proj.loaderClasses[name] {
		if r, ok := uniqueRef(f.proj.classDefs[name], f); ok {
			return r.file.superInitWorkersOn(r.fn)
		}
	}
	return false
}

// superInitWorkersOn: the class's __init__ calls super().__init__ with
// workers on.
func (f *file) superInitWorkersOn(cls *Node) bool {
	init := method(cls, "__init__")
	if init == nil {
		return false
	}
	return findInScope(init, func(n *Node) bool {
		recv, m := methodCall(n)
		return m == "__init__" && recv.Is("Call") && lastName(recv.K("func")) == "super" && workersOn(n)
	}) != nil
}

// dictWorkersOn reports num_workers (not a literal 0) in the mapping e
// passed as **e to call.
func (f *file) dictWorkersOn(call, e *Node, depth int) bool {
	if depth > 4 || e == nil {
		return false
	}
	switch e.TypeOr() {
	case "Dict":
		for i, k := range e.L("keys") {
			if s, ok := constStr(k); ok && s == "num_workers" && i < len(e.L("values")) {
				return nonZero(e.L("values")[i])
			}
			if k == nil && i < len(e.L("values")) && f.dictWorkersOn(call, e.L("values")[i], depth+1) {
				return true // {**base, ...}
			}
		}
	case "Call":
		if lastName(e.K("func")) == "dict" {
			if v := kwarg(e, "num_workers"); v != nil {
				return nonZero(v)
			}
		}
	case "IfExp":
		return f.dictWorkersOn(call, e.K("body"), depth+1) || f.dictWorkersOn(call, e.K("orelse"), depth+1)
	case "Name":
		if fn := enclosingFunc(call); fn != nil && fn.Is("FunctionDef", "AsyncFunctionDef") && fn.K("args").K("kwarg").S("arg") == e.S("id") {
			return f.kwargsAtCallSites(fn, depth)
		}
		return f.nameDictWorkersOn(call, e.S("id"), depth)
	}
	return false
}

// nameDictWorkersOn follows a dict variable: its assignments, .update()
// calls and d["num_workers"] = ... stores anywhere in the file.
func (f *file) nameDictWorkersOn(call *Node, name string, depth int) bool {
	key := dictKey{f, name}
	if v, ok := f.proj.dictWorkers[key]; ok {
		return v
	}
	f.proj.dictWorkers[key] = false // a dict defined from itself stops here
	v := f.scanDictWorkersOn(call, name, depth)
	f.proj.dictWorkers[key] = v
	return v
}

// dictKey names a dict variable of one file.
type dictKey struct {
	f    *file
	name string
}

func (f *file) scanDictWorkersOn(call *Node, name string, depth int) bool {
	for _, a := range f.nodes("Assign") {
		for _, t := range a.L("targets") {
			switch {
			case t.Is("Name") && t.S("id") == name:
				if f.dictWorkersOn(call, a.K("value"), depth+1) {
					return true
				}
			case t.Is("Subscript") && dotted(t.K("value")) == name:
				if s, ok := constStr(subscriptIndex(t)); ok && s == "num_workers" && nonZero(a.K("value")) {
					return true
				}
			}
		}
	}
	for _, c := range f.nodes("Call") {
		if recv, m := methodCall(c); m == "update" && dotted(recv) == name {
			if len(c.L("args")) > 0 && f.dictWorkersOn(call, c.L("args")[0], depth+1) {
				return true
			}
			if v := kwarg(c, "num_workers"); v != nil && nonZero(v) {
				return true
			}
		}
	}
	return false
}

// kwargsAtCallSites: some call of fn in the project passes num_workers
// (or a dict holding it) into fn's **kwargs.
func (f *file) kwargsAtCallSites(fn *Node, depth int) bool {
	name := fn.S("name")
	for _, g := range f.proj.allFiles() {
		for _, c := range g.nodes("Call") {
			if lastName(c.K("func")) != name {
				continue
			}
			if v := kwarg(c, "num_workers"); v != nil && nonZero(v) {
				return true
			}
			for _, k := range c.L("keywords") {
				if k.S("arg") == "" && g.dictWorkersOn(c, k.K("value"), depth+1) {
					return true
				}
			}
		}
	}
	return false
}

// argsAtCallSites lists, with their files, the expressions passed for
// parameter param of fn at its call sites in the project.
func (p *project) argsAtCallSites(fn *Node, param string) []funcArg {
	params := paramNames(fn)
	i := indexOf(params, param)
	if i < 0 {
		return nil
	}
	if len(params) > 0 && (params[0] == "self" || params[0] == "cls") {
		i-- // called as obj.method(...)
	}
	var out []funcArg
	for _, g := range p.allFiles() {
		for _, c := range g.nodes("Call") {
			if lastName(c.K("func")) != fn.S("name") {
				continue
			}
			if v := kwarg(c, param); v != nil {
				out = append(out, funcArg{v, g})
			} else if args := c.L("args"); i >= 0 && i < len(args) && !args[i].Is("Starred") {
				out = append(out, funcArg{args[i], g})
			}
		}
	}
	return out
}

// funcArg is an expression in a file.
type funcArg struct {
	e *Node
	f *file
}

// datasetClassesOf names the classes the dataset argument of a loader call
// may be: classesOf it, or, for a parameter of the enclosing function,
// what the function's callers pass.
func (f *file) datasetClassesOf(ds *Node) []string {
	out := f.classesOf(ds)
	if len(out) > 0 || !ds.Is("Name") {
		return out
	}
	fn := enclosingFunc(ds)
	if fn == nil || !fn.Is("FunctionDef", "AsyncFunctionDef") {
		return nil
	}
	for _, a := range f.proj.argsAtCallSites(fn, ds.S("id")) {
		out = append(out, a.f.classesOf(a.e)...)
	}
	return out
}

// nonZero: anything but a literal 0 (a variable counts as on, as in
// workersOn).
func nonZero(v *Node) bool {
	n, ok := constInt(v)
	return !ok || n > 0
}

// subscriptIndex is the index expression of x[i] (Python 3.8's Index
// wrapper removed).
func subscriptIndex(s *Node) *Node {
	sl := s.K("slice")
	if sl.Is("Index") {
		sl = sl.K("value")
	}
	return sl
}
