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
		if repl, ok := deprecatedAMP[q]; ok {
			f.report(call, "TM009", q+" is deprecated; use "+repl)
		}
	}
	// Decorators without call parentheses: @torch.cuda.amp.custom_fwd
	for _, fn := range f.nodes("FunctionDef", "AsyncFunctionDef") {
		for _, d := range fn.L("decorator_list") {
			if q := f.qualify(d); d.Is("Name", "Attribute") && deprecatedAMP[q] != "" {
				f.report(d, "TM009", q+" is deprecated; use "+deprecatedAMP[q])
			}
		}
	}
}

func checkTM011(f *file) {
	for _, call := range f.nodes("Call") {
		fn := call.K("func")
		q := ""
		if lastName(fn) == "load" {
			q = f.qualify(fn)
		}
		if q != "torch.load" && q != "torch.jit.load" {
			continue
		}
		if kwarg(call, "map_location") != nil || len(call.L("args")) >= 2 || hasStarKwargs(call) {
			continue
		}
		f.report(call, "TM011", q+" without map_location: tensors saved on a GPU are restored onto that GPU")
	}
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
				f.report(call, "TM014", "autograd anomaly detection switched on unconditionally")
			}
		case strings.HasSuffix(q, "autograd.detect_anomaly") || q == "torch.autograd.anomaly_mode.detect_anomaly":
			if !insideIf(call) {
				f.report(call, "TM014", "autograd anomaly detection (detect_anomaly) used outside any debug condition")
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
