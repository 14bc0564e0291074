package lint

import "strings"

// Where TM010 may assume model outputs sit on a GPU.
//
//	def validate(model, dl):            # model handed in by the caller
//	    for xb, yb in dl:
//	        preds.append(model(xb))     # device decided elsewhere
//
// A file that names CUDA says so itself. A file built on a training
// framework (Lightning, fastai, Accelerate, DeepSpeed, pytorch-forecasting,
// the transformers Trainer) has its device placed by the framework, on the
// GPU wherever there is one. A function handed its model by a caller, in a
// file that never chooses the CPU, has its device decided elsewhere too.

// deviceFrameworks place models and batches on the accelerator themselves.
var deviceFrameworks = []string{"lightning", "pytorch_lightning", "fastai", "accelerate",
	"deepspeed", "pytorch_forecasting", "transformers"}

// outputsMayBeOnGPU reports device evidence for the model outputs
// accumulated at stmt.
func (f *file) outputsMayBeOnGPU(stmt *Node) bool {
	if f.usesCUDA() || f.usesDeviceFramework() {
		return true
	}
	fn := enclosingFunc(stmt)
	return fn != nil && modelParam(fn) && !f.choosesCPU()
}

func (f *file) usesDeviceFramework() bool {
	for _, q := range f.imports {
		for _, fw := range deviceFrameworks {
			if q == fw || strings.HasPrefix(q, fw+".") {
				return true
			}
		}
	}
	return false
}

// modelParam: fn takes its model from the caller (def validate(model, dl)).
func modelParam(fn *Node) bool {
	for _, a := range fn.K("args").L("args") {
		if modelNameRe.MatchString(a.S("arg")) {
			return true
		}
	}
	return false
}

// choosesCPU: the file picks a "cpu" device somewhere (torch.device("cpu"),
// .to("cpu"), device="cpu"), so its outputs may well stay on the host.
func (f *file) choosesCPU() bool {
	for _, n := range f.nodes("Constant") {
		if s, ok := n.Value.(string); ok && s == "cpu" && cpuDeviceChoice(n) {
			return true
		}
	}
	return false
}
