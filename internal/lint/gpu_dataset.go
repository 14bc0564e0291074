package lint

// Datasets whose tensors already live on the GPU, read by DataLoader
// workers (TM007): a TensorDataset built from CUDA tensors, or a Dataset
// whose __init__ moves its data to the GPU (self.x = x.cuda()). Every
// worker that indexes such a tensor initialises CUDA: a CUDA context of
// hundreds of MiB per worker, or, under fork, "Cannot re-initialize CUDA in
// forked subprocess". Without workers, keeping a small dataset on the GPU
// is a legitimate speed-up and is left alone.

// checkGPUDatasets reports both forms in f.
func (f *file) checkGPUDatasets() {
	p := f.proj
	for _, cls := range f.nodes("ClassDef") {
		if !p.workerClasses[cls.S("name")] {
			continue
		}
		init := method(cls, "__init__")
		if init == nil {
			continue
		}
		walkScope(init, func(n *Node) {
			if !n.Is("Assign") || len(n.L("targets")) != 1 {
				return
			}
			tg := n.L("targets")[0]
			if tg.Is("Attribute") && dotted(tg.K("value")) == "self" && f.isCUDAValue(n.K("value")) {
				f.report(n, "TM007", "tm007.init_on_gpu", cls.S("name"), dotted(tg))
			}
		})
	}
	if !f.callsTensorDataset() {
		return
	}
	for _, l := range p.workerLoaders {
		if l.f != f {
			continue
		}
		ds := kwarg(l.e, "dataset")
		if ds == nil && len(l.e.L("args")) > 0 {
			ds = l.e.L("args")[0]
		}
		if td := f.tensorDatasetOf(ds); td != nil && f.holdsCUDATensor(td) {
			f.report(l.e, "TM007", "tm007.tensor_dataset", td.Line)
		}
	}
}

// isCUDAValue: the value is (the result of) a CUDA move or creation.
func (f *file) isCUDAValue(v *Node) bool {
	return v.Is("Call") && f.isCUDACall(v)
}

// tensorDatasetOf returns the TensorDataset(...) call ds is, or is bound to
// in the file (the only binding), or nil.
func (f *file) tensorDatasetOf(ds *Node) *Node {
	if ds.Is("Call") && lastName(ds.K("func")) == "TensorDataset" {
		return ds
	}
	if !ds.Is("Name") {
		return nil
	}
	var found *Node
	for _, a := range f.nodes("Assign") {
		for _, t := range a.L("targets") {
			if t.Is("Name") && t.S("id") == ds.S("id") {
				if v := a.K("value"); v.Is("Call") && lastName(v.K("func")) == "TensorDataset" {
					found = v
				} else {
					return nil // rebound to something else: unclear
				}
			}
		}
	}
	return found
}

// holdsCUDATensor: some argument of TensorDataset is a CUDA tensor, built
// in place or bound to one by the name's last assignment before it
// (x = x.to(device) after x = torch.randn(...) counts).
func (f *file) holdsCUDATensor(td *Node) bool {
	for _, a := range td.L("args") {
		if f.isCUDAValue(a) {
			return true
		}
		if !a.Is("Name") {
			continue
		}
		var last *Node
		for _, as := range f.nodes("Assign") {
			for _, t := range as.L("targets") {
				if t.Is("Name") && t.S("id") == a.S("id") && as.Line < td.Line && (last == nil || as.Line > last.Line) {
					last = as
				}
			}
		}
		if last != nil && enclosingFunc(last) == enclosingFunc(td) && f.isCUDAValue(last.K("value")) {
			return true
		}
	}
	return false
}

// callsTensorDataset: a cheap test before the per-loader scans.
func (f *file) callsTensorDataset() bool {
	for _, c := range f.nodes("Call") {
		if lastName(c.K("func")) == "TensorDataset" {
			return true
		}
	}
	return false
}
