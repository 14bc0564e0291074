package lint

import (
	"strings"
)

// TM007: CUDA work in code that DataLoader workers run.

func checkTM007(f *file) {
	p := f.proj
	f.checkGPUDatasets() // gpu_dataset.go: data already on the GPU when workers read it
	for _, cls := range f.nodes("ClassDef") {
		name := cls.S("name")
		if !p.workerClasses[name] {
			continue
		}
		for _, m := range []string{"__getitem__", "__getitems__", "__iter__", "__call__"} {
			if fn := method(cls, m); fn != nil {
				f.cudaWork(fn, word("plain", name+"."+m))
			}
		}
	}
	for _, fn := range f.nodes("FunctionDef") {
		if p.workerFuncs[fn.S("name")] && enclosingClass(fn) == nil {
			f.cudaWork(fn, word("plain", fn.S("name")))
		}
	}
	for _, l := range f.nodes("Lambda") {
		if p.workerLambdas[l] {
			f.cudaWork(l, word("tm007.collate_lambda"))
		}
	}
}

// cudaWork reports the first CUDA operation in fn's own body.
func (f *file) cudaWork(fn *Node, where msg) {
	hit := findInScope(fn, func(n *Node) bool { return n.Is("Call") && f.isCUDACall(n) })
	if hit != nil {
		f.report(hit, "TM007", "tm007.worker", where)
	}
}

// isCUDACall: x.cuda(), x.to("cuda"), x.to(device) where device is bound to
// a CUDA device in this file, torch.*(…, device="cuda"), torch.cuda.* work.
func (f *file) isCUDACall(call *Node) bool {
	recv, m := methodCall(call)
	q := f.qualify(call.K("func"))
	switch {
	case m == "cuda" && recv != nil && f.qualify(recv) != "torch":
		return true
	case m == "to" && f.cudaDevice(firstArg(call)):
		return true
	case strings.HasPrefix(q, "torch.cuda.") && !strings.HasSuffix(q, "is_available") && !strings.HasSuffix(q, "device_count"):
		return true
	}
	return f.cudaDevice(kwarg(call, "device"))
}

// cudaDevice reports an expression naming a CUDA device: "cuda:0",
// torch.device("cuda"), or a variable this file binds to one.
func (f *file) cudaDevice(e *Node) bool {
	if e == nil {
		return false
	}
	if s, ok := constStr(e); ok {
		return strings.HasPrefix(s, "cuda")
	}
	if e.Is("Call") && lastName(e.K("func")) == "device" {
		return f.cudaDevice(firstArg(e))
	}
	if e.Is("Name", "Attribute") {
		key := dotted(e)
		for _, a := range f.nodes("Assign") {
			for _, t := range a.L("targets") {
				if dotted(t) == key && mentionsCUDA(a.K("value")) {
					return true
				}
			}
		}
		return f.cudaFromConstructor(e)
	}
	return false
}

// cudaFromConstructor reports self.device bound in __init__ from a
// parameter (self.device = device, or torch.device(device)) that a call of
// the class in this file passes a CUDA device: MyDataset(samples, "cuda").
func (f *file) cudaFromConstructor(e *Node) bool {
	cls := enclosingClass(e)
	if cls == nil || !e.Is("Attribute") || dotted(e.K("value")) != "self" {
		return false
	}
	init := method(cls, "__init__")
	if init == nil {
		return false
	}
	param := ""
	walkScope(init, func(n *Node) {
		if !n.Is("Assign") || len(n.L("targets")) != 1 || dotted(n.L("targets")[0]) != dotted(e) {
			return
		}
		v := n.K("value")
		if v.Is("Call") && lastName(v.K("func")) == "device" {
			v = firstArg(v)
		}
		if v.Is("Name") {
			param = v.S("id")
		}
	})
	pos := -1
	for i, a := range init.K("args").L("args") {
		if a.S("arg") == param && i > 0 {
			pos = i - 1
		}
	}
	if pos < 0 {
		return false
	}
	for _, call := range f.nodes("Call") {
		if lastName(call.K("func")) != cls.S("name") {
			continue
		}
		arg := kwarg(call, param)
		if args := call.L("args"); arg == nil && pos < len(args) {
			arg = args[pos]
		}
		if s, ok := constStr(arg); ok && strings.HasPrefix(s, "cuda") {
			return true
		}
	}
	return false
}

// mentionsCUDA: the bound value names a "cuda…" device anywhere, as in
// `"cuda" if torch.cuda.is_available() else "cpu"`: on every GPU machine,
// where the job runs, that is CUDA.
func mentionsCUDA(v *Node) bool {
	hit := false
	v.Walk(func(n *Node) bool {
		if s, ok := constStr(n); ok && strings.HasPrefix(s, "cuda") {
			hit = true
		}
		return true
	})
	return hit
}
