package lint

import "strings"

// Rules about single API calls: TM009, TM011, TM014.

var deprecatedAMP = map[string]string{
	"torch.cuda.amp.autocast":   "torch.amp.autocast(\"cuda\", ...)",
	"torch.cuda.amp.GradScaler": "torch.amp.GradScaler(\"cuda\")",
	"torch.cpu.amp.autocast":    "torch.amp.autocast(\"cpu\", ...)",
	"torch.cuda.amp.custom_fwd": "torch.amp.custom_fwd(device_type=\"cuda\")",
	"torch.cuda.amp.custom_bwd": "torch.amp.custom_bwd(device_type=\"cuda\")",
	"torch.cpu.amp.GradScaler":  "torch.amp.GradScaler(\"cpu\")",
}

func checkTM009(f *file) {
	for _, call := range f.nodes("Call") {
		switch lastName(call.K("func")) {
		case "autocast", "GradScaler", "custom_fwd", "custom_bwd":
		default:
			continue
		}
		q := f.qualify(call.K("func"))
		if repl, ok := deprecatedAMP[q]; ok && !f.fallbackFromNewAMP(call) {
			f.report(call, "TM009", "tm009.deprecated", q, repl)
		}
	}
	// Decorators without call parentheses: @torch.cuda.amp.custom_fwd
	for _, fn := range f.nodes("FunctionDef", "AsyncFunctionDef") {
		for _, d := range fn.L("decorator_list") {
			if q := f.qualify(d); d.Is("Name", "Attribute") && deprecatedAMP[q] != "" {
				f.report(d, "TM009", "tm009.deprecated", q, deprecatedAMP[q])
			}
		}
	}
}

// fallbackFromNewAMP: call is the fallback of code that tries torch.amp
// first (an except handler of a try whose body calls torch.amp.*, or the
// else branch of an if whose body does), kept for older PyTorch releases.
func (f *file) fallbackFromNewAMP(call *Node) bool {
	newAPI := func(list []*Node) bool {
		return bodyHas(list, func(n *Node) bool {
			return n.Is("Call") && strings.HasPrefix(f.qualify(n.K("func")), "torch.amp.")
		})
	}
	for c, p := call, call.Parent; p != nil && !isFunc(p); c, p = p, p.Parent {
		switch {
		case p.Is("ExceptHandler") && p.Parent.Is("Try", "TryStar") && newAPI(p.Parent.L("body")):
			return true
		case p.Is("If") && c.Field == "orelse" && newAPI(p.L("body")):
			return true
		case p.Is("IfExp") && c.Field == "orelse" && newAPI([]*Node{p.K("body")}):
			return true
		}
	}
	return false
}

// checkTM011 reports torch.load without map_location only where restoring
// onto the saving device matters: a multi-process job (every rank fills
// the GPU the checkpoint came from) or a CPU inference path. It stays silent
// for files whose torch.save stores .cpu() tensors and for payloads that
// are not tensors (numpy, JSON, text).
func checkTM011(f *file) {
	var where string // the message id
	multi := f.multiProcess()
	switch {
	case multi:
		where = "tm011.multi_process"
	case f.cpuInference():
		where = "tm011.cpu_inference"
	default:
		return
	}
	if f.savesCPUTensors() {
		return
	}
	for _, call := range f.nodes("Call") {
		fn := call.K("func")
		q := ""
		if lastName(fn) == "load" {
			q = f.qualify(fn)
		}
		if q != "torch.load" && q != "torch.jit.load" {
			continue
		}
		if kwarg(call, "map_location") != nil || len(call.L("args")) >= 2 || hasStarKwargs(call) || f.nonTensorPayload(call) {
			continue
		}
		if multi && rankZeroOnly(call) && !f.cpuInference() {
			continue // one process loads: nothing is multiplied across ranks
		}
		f.report(call, "TM011", where, q)
	}
}

// multiProcess: the file starts or joins a multi-process job
// (torch.distributed, torch.multiprocessing, DeepSpeed, Accelerate,
// Horovod, a DDP/FSDP wrapper, LOCAL_RANK).
func (f *file) multiProcess() bool {
	for _, q := range f.imports {
		for _, pre := range []string{"torch.distributed", "torch.multiprocessing", "deepspeed", "accelerate", "horovod"} {
			if q == pre || strings.HasPrefix(q, pre+".") {
				return true
			}
		}
	}
	for _, n := range f.nodes("Name", "Attribute", "Constant") {
		name := n.S("id") + n.S("attr")
		if s, ok := n.Value.(string); ok {
			name = s
		}
		switch name {
		case "init_process_group", "DistributedDataParallel", "FullyShardedDataParallel", "LOCAL_RANK", "local_rank":
			return true
		}
	}
	return false
}

// cpuInference: nothing in the file trains (no backward), and it names a
// "cpu" device (torch.device("cpu"), .to("cpu"), map to CPU when CUDA is
// missing).
func (f *file) cpuInference() bool {
	for _, call := range f.nodes("Call") {
		if _, ok := backwardOf(call); ok {
			return false
		}
	}
	for _, n := range f.nodes("Constant") {
		if s, ok := n.Value.(string); ok && s == "cpu" && cpuDeviceChoice(n) {
			return true
		}
	}
	return false
}

// cpuDeviceChoice: the "cpu" constant n picks where the job runs
// (torch.device("cpu"), .to("cpu"), device="cpu", device = "cuda" if ...
// else "cpu"), not where one load maps to.
func cpuDeviceChoice(n *Node) bool {
	p := n.Parent
	if p.Is("IfExp") {
		p = p.Parent
	}
	switch {
	case p.Is("Call"):
		l := lastName(p.K("func"))
		return l == "device" || l == "to"
	case p.Is("keyword"):
		return p.S("arg") == "device"
	case p.Is("Assign"):
		for _, t := range p.L("targets") {
			if anyToken(nameTokens(t), "device") {
				return true
			}
		}
	}
	return false
}

// savesCPUTensors: a torch.save in the file stores tensors moved to the CPU
// (`torch.save(model.cpu().state_dict(), p)`, `{k: v.cpu() ...}`, or a name
// bound to such a value): what it writes loads onto the CPU anyway.
func (f *file) savesCPUTensors() bool {
	hasCPU := func(e *Node) bool {
		found := false
		e.Walk(func(n *Node) bool {
			found = found || n.Is("Attribute") && n.S("attr") == "cpu"
			return !found
		})
		return found
	}
	for _, call := range f.nodes("Call") {
		arg := firstArg(call)
		if f.qualify(call.K("func")) != "torch.save" || arg == nil {
			continue
		}
		if hasCPU(arg) {
			return true
		}
		for _, a := range f.nodes("Assign") {
			for _, t := range a.L("targets") {
				if arg.Is("Name") && dotted(t) == dotted(arg) && hasCPU(a.K("value")) {
					return true
				}
			}
		}
	}
	return false
}

// nonTensorPayloads are file suffixes torch.load is sometimes pointed at
// for arrays, vocabularies and metadata.
var nonTensorPayloads = []string{".npy", ".npz", ".json", ".txt", ".csv", ".yaml", ".yml"}

// nonTensorPayload: the loaded file is named like numpy or text data, or the
// result goes straight into numpy (np.asarray(torch.load(p))).
func (f *file) nonTensorPayload(call *Node) bool {
	if p := call.Parent; p.Is("Call") && strings.HasPrefix(f.qualify(p.K("func")), "numpy.") {
		return true
	}
	arg := firstArg(call)
	if arg.Is("Call") && lastName(arg.K("func")) == "join" { // os.path.join(dir, "x.npy")
		arg = lastOf(arg.L("args"))
	}
	if arg.Is("JoinedStr") { // f"{root}/feats.npy"
		arg = lastOf(arg.L("values"))
	}
	s, _ := constStr(arg)
	for _, suf := range nonTensorPayloads {
		if strings.HasSuffix(strings.ToLower(s), suf) {
			return true
		}
	}
	return false
}

func lastOf(list []*Node) *Node {
	if len(list) == 0 {
		return nil
	}
	return list[len(list)-1]
}

func checkTM014(f *file) {
	for _, call := range f.nodes("Call") {
		if l := lastName(call.K("func")); l != "set_detect_anomaly" && l != "detect_anomaly" {
			continue
		}
		q := f.qualify(call.K("func"))
		switch {
		case strings.HasSuffix(q, "autograd.set_detect_anomaly") || q == "torch.set_detect_anomaly":
			args := call.L("args")
			if len(args) == 0 {
				continue
			}
			if v, ok := constBool(args[0]); ok && v && !insideIf(call) {
				f.report(call, "TM014", "tm014.set")
			}
		case strings.HasSuffix(q, "autograd.detect_anomaly") || q == "torch.autograd.anomaly_mode.detect_anomaly":
			if !insideIf(call) {
				f.report(call, "TM014", "tm014.context")
			}
		}
	}
}

// insideIf reports n lying under an if statement or conditional expression
// of its own function (a debug switch).
func insideIf(n *Node) bool {
	for p := n.Parent; p != nil && !isFunc(p); p = p.Parent {
		if p.Is("If", "IfExp") {
			return true
		}
	}
	return false
}
