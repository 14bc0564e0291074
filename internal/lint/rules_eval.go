package lint

import (
	"fmt"
	"path/filepath"
	"strings"
)

// TM001: a model called for evaluation with autograd on.

var evalWords = []string{"val", "valid", "validation", "test", "testing", "eval", "evaluation",
	"dev", "holdout", "inference", "infer", "predict", "prediction"}

// evalFuncWords name evaluation functions: evaluate(), validate(),
// run_validation(), test_epoch(), predict().
var evalFuncWords = []string{"evaluate", "eval", "validate", "validation", "val", "test",
	"inference", "predict", "evaluation"}

func checkTM001(f *file) {
	if f.isTestFile() {
		return // unit tests run a handful of tiny forwards
	}
	seen := map[string]bool{}
	usesGrad := map[*Node]bool{}
	for _, call := range f.nodes("Call") {
		if !f.isModelCall(call) || f.gradOff(call) || f.frozen()[dotted(call.K("func"))] {
			continue
		}
		if isPipelineCall(call) {
			continue // diffusers/transformers pipelines run their __call__ under no_grad
		}
		fn := enclosingFunc(call)
		if fn != nil && (f.inModuleClass(fn) || f.inUnitTest(fn)) {
			continue
		}
		scope := fn
		if scope == nil {
			scope = f.mod
		}
		g, ok := usesGrad[scope]
		if !ok {
			g = scopeNeedsGrad(scope)
			usesGrad[scope] = g
		}
		key := fmt.Sprintf("%p/%s", scope, dotted(call.K("func")))
		if seen[key] {
			continue
		}
		// With backward or autograd.grad in the function, gradients are
		// wanted somewhere (training, attacks, saliency): only a validation
		// loop that itself never backpropagates still counts.
		if m := f.evalContext(call, scope, g); m.id != "" {
			seen[key] = true
			f.report(call, "TM001", m.id, m.args...)
		}
	}
}

// evalContext explains why call is an evaluation (a message), or returns
// the zero msg.
func (f *file) evalContext(call, scope *Node, gradWanted bool) msg {
	name := dotted(call.K("func"))
	for _, loop := range loopsOf(call) {
		if loop.Is("For", "AsyncFor") && anyToken(nameTokens(loop.K("iter")), evalWords...) && !scopeNeedsGrad(loop) {
			return word("tm001.eval_loop", name, loop.Line)
		}
	}
	if gradWanted {
		return msg{}
	}
	if fn := enclosingFunc(call); fn != nil && anyToken(wordTokens(funcName(fn)), evalFuncWords...) {
		for _, loop := range loopsOf(call) {
			if batchLoop(loop) {
				return word("tm001.eval_func", name, funcName(fn), loop.Line)
			}
		}
	}
	// A one-off forward outside any loop (predict(x) after model.eval())
	// holds one batch's graph for as long as its output lives: not worth a
	// warning.
	if len(loopsOf(call)) == 0 && !inComprehension(call) {
		return msg{}
	}
	if l := evalCallBefore(scope, name, call.Line); l > 0 {
		return word("tm001.after_eval", name, l)
	}
	return msg{}
}

// evalCallBefore returns the line of the last model.eval() before line in
// scope, unless a model.train() comes between; 0 when there is none.
func evalCallBefore(scope *Node, model string, line int) int {
	evalLine, trainLine := 0, 0
	walkScope(scope, func(n *Node) {
		recv, m := methodCall(n)
		if n.Line >= line || dotted(recv) != model {
			return
		}
		switch {
		case m == "eval" && n.Line > evalLine && len(n.L("args")) == 0:
			evalLine = n.Line
		case m == "train" && n.Line > trainLine:
			if v, ok := constBool(firstArg(n)); !ok || v {
				trainLine = n.Line
			}
		}
	})
	if evalLine > trainLine {
		return evalLine
	}
	return 0
}

func firstArg(call *Node) *Node {
	if a := call.L("args"); len(a) > 0 {
		return a[0]
	}
	return nil
}

// scopeNeedsGrad reports backward, autograd.grad or requires_grad_ in a
// scope (a function, the module, or one loop).
func scopeNeedsGrad(scope *Node) bool {
	return findInScope(scope, func(n *Node) bool {
		if _, ok := backwardOf(n); ok {
			return true
		}
		switch lastName(n.K("func")) {
		case "grad", "requires_grad_", "enable_grad", "vjp", "jvp", "jacobian", "hessian":
			if n.Is("Call") {
				return true
			}
		}
		return n.Is("Attribute") && n.S("attr") == "requires_grad" && n.Field == "targets"
	}) != nil
}

// frozen lists models whose parameters are all switched off:
// model.requires_grad_(False), or p.requires_grad = False in a loop over
// model.parameters(). Calling them builds no graph.
func (f *file) frozen() map[string]bool {
	if f.frozenModels != nil {
		return f.frozenModels
	}
	f.frozenModels = map[string]bool{}
	for _, call := range f.nodes("Call") {
		recv, m := methodCall(call)
		if v, ok := constBool(firstArg(call)); m == "requires_grad_" && ok && !v {
			f.frozenModels[dotted(unwrapModelChain(recv))] = true
		}
	}
	for _, loop := range f.nodes("For") {
		recv, m := methodCall(loop.K("iter"))
		if m != "parameters" {
			continue
		}
		walkScope(loop, func(n *Node) {
			if !n.Is("Assign") {
				return
			}
			v, ok := constBool(n.K("value"))
			for _, t := range n.L("targets") {
				if ok && !v && t.Is("Attribute") && t.S("attr") == "requires_grad" {
					f.frozenModels[dotted(recv)] = true
				}
			}
		})
	}
	return f.frozenModels
}

// isTestFile: test_*.py, *_test.py or conftest.py, the names pytest collects.
func (f *file) isTestFile() bool {
	base := filepath.Base(f.path)
	return strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py") ||
		strings.HasSuffix(base, "_test.py") || base == "conftest.py"
}

// inUnitTest: fn (or a function around it) is a method of a
// unittest.TestCase subclass, or a test_* function that asserts or sits in
// a file importing pytest or unittest. A bare `def test_loop(model,
// loader)` in a training script is an evaluation loop, not a unit test.
func (f *file) inUnitTest(fn *Node) bool {
	_, pytest := f.imports["pytest"]
	_, unittest := f.imports["unittest"]
	for p := fn; p != nil; p = p.Parent {
		if p.Is("ClassDef") {
			for _, b := range p.L("bases") {
				if strings.HasSuffix(dotted(b), "TestCase") {
					return true
				}
			}
		}
		if !p.Is("FunctionDef", "AsyncFunctionDef") || !strings.HasPrefix(p.S("name"), "test") {
			continue
		}
		if pytest || unittest || findInScope(p, func(n *Node) bool { return n.Is("Assert") }) != nil {
			return true
		}
	}
	return false
}

// inComprehension: n is repeated by a comprehension of its own function
// ([model(x) for x in loader]).
func inComprehension(n *Node) bool {
	for p := n.Parent; p != nil && !isFunc(p); p = p.Parent {
		if p.Is("ListComp", "SetComp", "GeneratorExp", "DictComp") {
			return true
		}
	}
	return false
}
