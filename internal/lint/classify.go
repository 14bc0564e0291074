package lint

import "strings"

// What a name holds (model, loss, optimizer) is read from how it is bound
// and used in the file, with conventional names as a fallback. Rules that
// fire on model calls need one of these to hold, which keeps them quiet on
// code whose data flow is unclear.

// classify fills f.models, f.losses and f.optims.
func (f *file) classify() {
	for _, call := range f.nodes("Call") {
		recv, m := methodCall(call)
		switch m {
		case "eval", "train", "parameters", "named_parameters":
			// nn.Module.eval() takes no argument (sympy's log.eval(x) does).
			if m == "eval" && len(call.L("args")) > 0 || len(call.L("args")) > 1 {
				continue
			}
			if k := dotted(recv); k != "" && !strings.HasSuffix(k, "()") {
				f.models[k] = true
				f.modelLast[lastName(recv)] = true
			}
		}
	}
	for _, a := range f.nodes("Assign", "AnnAssign") {
		v := unwrapModelChain(a.K("value"))
		if !v.Is("Call") {
			continue
		}
		var targets []*Node
		if a.Is("Assign") {
			targets = a.L("targets")
		} else {
			targets = []*Node{a.K("target")}
		}
		kind := f.ctorKind(v)
		for _, t := range targets {
			if k := dotted(t); k != "" && kind != "" {
				f.kindSet(kind)[k] = true
				if kind == "model" {
					f.modelLast[lastName(t)] = true
				}
			}
		}
	}
}

func (f *file) kindSet(kind string) map[string]bool {
	switch kind {
	case "model":
		return f.models
	case "loss":
		return f.losses
	}
	return f.optims
}

// unwrapModelChain strips .to(device), .cuda(), .eval() and friends from
// Net().to(device) so the constructor is what is classified.
func unwrapModelChain(v *Node) *Node {
	for {
		recv, m := methodCall(v)
		switch m {
		case "to", "cuda", "cpu", "half", "float", "bfloat16", "eval", "train", "requires_grad_":
			if recv.Is("Call") {
				v = recv
				continue
			}
		}
		return v
	}
}

// ctorKind says what a constructor call builds: "model", "loss", "optim" or "".
func (f *file) ctorKind(call *Node) string {
	fn := call.K("func")
	q := f.qualify(fn)
	last := lastName(fn)
	switch {
	case strings.HasSuffix(last, "Loss") || strings.HasPrefix(q, "torch.nn.") && strings.HasSuffix(q, "Loss"):
		return "loss"
	case optimizerClasses[last] || strings.HasPrefix(q, "torch.optim.") && !strings.Contains(q, "lr_scheduler"):
		return "optim"
	case f.proj.moduleClasses[last] || wrapperClasses[last] || q == "torch.compile":
		return "model"
	case strings.HasPrefix(q, "torch.nn.") && last != "" && last[0] >= 'A' && last[0] <= 'Z':
		return "model"
	case strings.HasPrefix(q, "torchvision.models.") || last == "create_model":
		return "model"
	case last == "from_pretrained":
		owner := lastName(fn.K("value"))
		if strings.Contains(owner, "Model") || strings.Contains(owner, "For") {
			return "model"
		}
	}
	return ""
}

// isModelCall reports model(x), self.model(x), netG(z): a call of a name
// bound to an nn.Module or conventionally naming one. Functions and
// classes defined in the project are never model instances.
func (f *file) isModelCall(call *Node) bool {
	if !call.Is("Call") {
		return false
	}
	fn := call.K("func")
	if !fn.Is("Name", "Attribute") {
		return false
	}
	last := lastName(fn)
	if f.proj.funcNames[last] || f.proj.classNames[last] {
		return false
	}
	if !f.modelLast[last] && !modelNameRe.MatchString(last) {
		return false // cheap exit before spelling the receiver
	}
	key := dotted(fn)
	if f.losses[key] || f.optims[key] {
		return false
	}
	if f.models[key] {
		return true
	}
	if _, imported := f.imports[last]; imported && fn.Is("Name") {
		return false
	}
	return modelNameRe.MatchString(last) && !verbPrefixed(last)
}

func verbPrefixed(name string) bool {
	for _, p := range []string{"get_", "build_", "load_", "create_", "make_", "save_", "init_", "setup_",
		"train_", "eval_", "evaluate_", "export_", "to_", "from_", "wrap_", "prepare_", "_", "run_", "update_", "copy_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// isLossCall reports criterion(out, y), F.cross_entropy(...), loss_fn(...).
func (f *file) isLossCall(call *Node) bool {
	if !call.Is("Call") {
		return false
	}
	fn := call.K("func")
	if f.losses[dotted(fn)] {
		return true
	}
	last := lastName(fn)
	if functionalLosses[last] {
		q := f.qualify(fn)
		return strings.HasPrefix(q, "torch.nn.functional.") || strings.HasPrefix(q, "F.") || q == "torch."+last
	}
	return lossNameRe.MatchString(last)
}

// isOptimizer reports a receiver bound to an optimizer or named like one.
func (f *file) isOptimizer(recv *Node) bool {
	last := lastName(recv)
	if last == "" || strings.Contains(strings.ToLower(last), "sched") {
		return false
	}
	return f.optims[dotted(recv)] || optimNameRe.MatchString(last)
}

// isOptimStep reports optimizer.step() and scaler.step(optimizer).
func (f *file) isOptimStep(call *Node) bool {
	recv, m := methodCall(call)
	if m != "step" {
		return false
	}
	if f.isOptimizer(recv) {
		return true
	}
	args := call.L("args")
	return len(args) > 0 && strings.Contains(strings.ToLower(lastName(recv)), "scaler") && f.isOptimizer(args[0])
}

// backwardOf returns the tensor a backward call differentiates:
// loss.backward() -> loss, scaler.scale(loss).backward() -> loss,
// accelerator.backward(loss) / torch.autograd.backward(loss) -> loss.
func backwardOf(call *Node) (*Node, bool) {
	recv, m := methodCall(call)
	args := call.L("args")
	switch {
	case m == "manual_backward" && len(args) > 0:
		return args[0], true
	case m != "backward":
		return nil, false
	}
	if strings.Contains(lastName(recv), "dist_autograd") && len(args) > 1 {
		// torch.distributed.autograd.backward(context_id, [loss], ...)
		if t := args[1]; t.Is("List", "Tuple") && len(t.L("elts")) > 0 {
			return t.L("elts")[0], true
		}
		return args[1], true
	}
	if _, m2 := methodCall(recv); m2 == "scale" && len(recv.L("args")) > 0 {
		return recv.L("args")[0], true
	}
	if len(args) > 0 && (isBackwardFunc(recv) || modelNameRe.MatchString(lastName(recv))) {
		return args[0], true
	}
	return recv, true
}

// isBackwardFunc: receivers whose .backward(x) differentiates x, not
// themselves (torch.autograd, accelerator, fabric, deepspeed engines).
func isBackwardFunc(recv *Node) bool {
	switch lastName(recv) {
	case "autograd", "accelerator", "fabric", "engine", "model_engine":
		return true
	}
	return false
}
