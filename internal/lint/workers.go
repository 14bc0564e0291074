package lint

// DataLoader facts: which datasets and collate functions run in worker
// processes, and the loaders with a constant worker count (TM013).

// isDataLoader reports DataLoader(...) under any import spelling.
func isDataLoader(call *Node) bool {
	return call.Is("Call") && lastName(call.K("func")) == "DataLoader"
}

// numWorkers returns the num_workers argument (keyword, or the sixth
// positional as in the DataLoader signature), nil when left at its default 0.
func numWorkers(call *Node) *Node {
	if v := kwarg(call, "num_workers"); v != nil {
		return v
	}
	if args := call.L("args"); len(args) > 5 {
		return args[5]
	}
	return nil
}

// workersOn: num_workers is given and is not a literal 0. A variable
// (args.workers) counts: such settings are almost always positive.
func workersOn(call *Node) bool {
	nw := numWorkers(call)
	if nw == nil {
		return false
	}
	if v, ok := constInt(nw); ok {
		return v > 0
	}
	return true // a variable: see resolveInt for TM013, which needs the value
}

// findWorkerUse marks Dataset classes and collate functions handed to a
// DataLoader that uses worker processes.
func (f *file) findWorkerUse() {
	p := f.proj
	for _, call := range f.nodes("Call") {
		if !f.isLoaderCall(call) || !f.loaderWorkersOn(call) {
			continue
		}
		ds := kwarg(call, "dataset")
		if ds == nil && len(call.L("args")) > 0 {
			ds = call.L("args")[0]
		}
		for _, cls := range f.datasetClassesOf(ds) {
			p.workerClasses[cls] = true
		}
		p.workerLoaders = append(p.workerLoaders, funcArg{call, f})
		for _, kw := range []string{"collate_fn", "worker_init_fn"} {
			f.markWorkerCallable(kwarg(call, kw))
		}
	}
}

func (f *file) markWorkerCallable(v *Node) {
	p := f.proj
	switch v.TypeOr() {
	case "Lambda":
		p.workerLambdas[v] = true
	case "Name", "Attribute":
		p.workerFuncs[lastName(v)] = true
		for _, cls := range f.classesOf(v) {
			p.workerClasses[cls] = true
		}
	case "Call":
		if lastName(v.K("func")) == "partial" && len(v.L("args")) > 0 {
			f.markWorkerCallable(v.L("args")[0])
			return
		}
		p.workerClasses[lastName(v.K("func"))] = true
	}
}

// classesOf names the classes an expression may be an instance of:
// MyDataset(...) directly, or a variable assigned from such a call anywhere
// in the file.
func (f *file) classesOf(e *Node) []string {
	switch e.TypeOr() {
	case "Call":
		if n := lastName(unwrapModelChain(e).K("func")); n != "" {
			return []string{n}
		}
	case "Name", "Attribute":
		return f.callAssigns()[dotted(e)]
	}
	return nil
}

// callAssigns maps each assigned name to the functions or classes whose
// call results were assigned to it anywhere in the file (built once).
func (f *file) callAssigns() map[string][]string {
	if f.assignedCalls != nil {
		return f.assignedCalls
	}
	f.assignedCalls = map[string][]string{}
	for _, a := range f.nodes("Assign") {
		v := a.K("value")
		if !v.Is("Call") {
			continue
		}
		n := lastName(v.K("func"))
		if n == "" {
			continue
		}
		for _, t := range a.L("targets") {
			if k := dotted(t); k != "" {
				f.assignedCalls[k] = append(f.assignedCalls[k], n)
			}
		}
	}
	return f.assignedCalls
}
