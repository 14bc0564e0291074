package lint

// Which project function a call runs: a top-level function by name (this
// file's own first, then one defined exactly once in the other files, so
// `from utils import record` resolves), self.method() in a class, and
// obj.method() where obj is bound to an instance of a project class
// (meter = AverageMeter(); self.meter = AverageMeter()). Anything else is
// unknown.

// funcRef is a def and the file that holds it.
type funcRef struct {
	fn   *Node
	file *file
}

// callee is a resolved call: the function, and whether the call binds its
// first parameter (self) to recv.
type callee struct {
	funcRef
	method bool
	recv   *Node
}

// indexDefs records the top-level functions and classes of every file.
func (p *project) indexDefs() {
	for _, f := range p.allFiles() {
		for _, s := range f.mod.L("body") {
			switch s.TypeOr() {
			case "FunctionDef", "AsyncFunctionDef":
				p.topFuncs[s.S("name")] = append(p.topFuncs[s.S("name")], funcRef{s, f})
			case "ClassDef":
				p.classDefs[s.S("name")] = append(p.classDefs[s.S("name")], funcRef{s, f})
			}
		}
	}
}

// uniqueRef picks this file's definition, else the only one in the project.
func uniqueRef(refs []funcRef, f *file) (funcRef, bool) {
	for _, r := range refs {
		if r.file == f {
			return r, true
		}
	}
	if len(refs) == 1 {
		return refs[0], true
	}
	return funcRef{}, false
}

// resolveCall returns the project function call runs, if it is known.
func (f *file) resolveCall(call *Node) (callee, bool) {
	fn := call.K("func")
	p := f.proj
	switch fn.TypeOr() {
	case "Name":
		if r, ok := uniqueRef(p.topFuncs[fn.S("id")], f); ok {
			return callee{funcRef: r}, true
		}
	case "Attribute":
		recv, m := fn.K("value"), fn.S("attr")
		if recv.Is("Name") && recv.S("id") == "self" {
			if cls := enclosingClass(call); cls != nil {
				if d := p.methodOf(cls, f, m, 0); d.fn != nil {
					return callee{funcRef: d, method: true, recv: recv}, true
				}
			}
			return callee{}, false
		}
		var found callee
		n := 0
		for _, cname := range f.classesOf(recv) {
			r, ok := uniqueRef(p.classDefs[cname], f)
			if !ok {
				continue
			}
			if d := p.methodOf(r.fn, r.file, m, 0); d.fn != nil {
				found, n = callee{funcRef: d, method: true, recv: recv}, n+1
			}
		}
		if n == 1 {
			return found, true
		}
	}
	return callee{}, false
}

// methodOf finds method name in cls or, through project classes, its bases.
func (p *project) methodOf(cls *Node, f *file, name string, depth int) funcRef {
	if m := method(cls, name); m != nil {
		return funcRef{m, f}
	}
	if depth > 4 {
		return funcRef{}
	}
	for _, b := range cls.L("bases") {
		if r, ok := uniqueRef(p.classDefs[lastName(b)], f); ok && r.fn != cls {
			if d := p.methodOf(r.fn, r.file, name, depth+1); d.fn != nil {
				return d
			}
		}
	}
	return funcRef{}
}

// paramIndex maps argument i of call (or keyword kw) to the callee's
// parameter index; -1 when it cannot be told (after *args).
func (c callee) paramIndex(params []string, i int, kw string) int {
	if kw != "" {
		return indexOf(params, kw)
	}
	if c.method {
		i++
	}
	if i < len(params) {
		return i
	}
	return -1
}
