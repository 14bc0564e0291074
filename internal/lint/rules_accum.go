package lint

import (
	"strings"
)

// TM002 and TM010 share the taint pass: both are "something per iteration
// is kept in an accumulator that outlives the iteration".

func checkTM002TM010(f *file) {
	scopes := append([]*Node{f.mod}, f.nodes("FunctionDef", "AsyncFunctionDef")...)
	for _, sc := range scopes {
		if sc != f.mod && f.inModuleClass(sc) && sc.S("name") != "training_step" {
			continue // forward() internals: a list of per-layer outputs is the model's business
		}
		backward, anyBackward := backwardKeys(sc)
		fl := &flow{f: f, state: map[string]taint{}, backward: backward, anyBackward: anyBackward}
		fl.stmts(sc.L("body"))
	}
}

func (f *file) inModuleClass(fn *Node) bool {
	cls := enclosingClass(fn)
	return cls != nil && f.proj.moduleClasses[cls.S("name")]
}

// onAccum judges one accumulation of a value with taint t into target.
func (fl *flow) onAccum(stmt *Node, target string, t taint, appendLike bool) {
	f := fl.f
	if !t.any() || fl.backward[target] {
		return // the accumulator is itself differentiated: a summed loss, on purpose
	}
	for _, loop := range loopsOf(stmt) {
		if assignedIn(loop, target) {
			continue // reset every iteration of this loop: nothing carried over it
		}
		if t.hist && trainsIn(loop, target) {
			f.report(stmt, "TM002", "tm002.loop", target, loop.Line)
			return
		}
		if t.hist && !fl.anyBackward && batchLoop(loop) {
			f.report(stmt, "TM002", "tm002.no_backward", target, loop.Line)
			return
		}
		if appendLike && t.out && f.outputsMayBeOnGPU(stmt) && batchLoop(loop) {
			id := "tm010.kept"
			if t.hist {
				id = "tm010.kept_graph"
			}
			f.report(stmt, "TM010", id, target, loop.Line)
			return
		}
	}
}

// backwardKeys lists the names .backward() is called on in a scope, and
// reports any backward call there, whatever it differentiates
// (torch.stack(losses).mean().backward() included).
func backwardKeys(sc *Node) (keys map[string]bool, anyBackward bool) {
	keys = map[string]bool{}
	walkScope(sc, func(n *Node) {
		if t, ok := backwardOf(n); ok {
			anyBackward = true
			if k := dotted(t); k != "" {
				keys[k] = true
			}
		}
	})
	return keys, anyBackward
}

// assignedIn reports a plain (re)binding of key inside loop: key = ...,
// for key in ..., with ... as key. "key = key + x" is the accumulation, not
// a reset.
func assignedIn(loop *Node, key string) bool {
	found := false
	check := func(tg *Node) {
		if tg.Is("Subscript") && baseKey(tg) == key {
			found = true // stats["loss"] = 0: that entry restarts every iteration
			return
		}
		tg.Walk(func(x *Node) bool {
			if x.Is("Name", "Attribute") && dotted(x) == key && (x.Parent == nil || x.Field != "value" || !x.Parent.Is("Attribute", "Subscript")) {
				found = true
			}
			return x.Is("Tuple", "List", "Starred")
		})
	}
	walkScope(loop, func(n *Node) {
		switch n.Type {
		case "Assign":
			v := n.K("value")
			if v.Is("BinOp") && (dotted(v.K("left")) == key || dotted(v.K("right")) == key) {
				return
			}
			for _, tg := range n.L("targets") {
				check(tg)
			}
		case "AnnAssign":
			check(n.K("target"))
		case "For", "AsyncFor":
			check(n.K("target"))
		case "withitem":
			check(n.K("optional_vars"))
		}
	})
	return found
}

// trainsIn reports a backward call inside loop on something other than the
// accumulator: the loop is a training loop and the accumulator bookkeeping.
func trainsIn(loop *Node, acc string) bool {
	return findInScope(loop, func(n *Node) bool {
		t, ok := backwardOf(n)
		return ok && dotted(t) != acc
	}) != nil
}

var batchWords = []string{"loader", "dataloader", "dl", "dls", "batch", "batches", "data", "dataset", "iterator",
	"val", "valid", "validation", "test", "eval", "evaluation", "dev", "samples"}

// batchLoop reports a for loop over something named like batches of data.
func batchLoop(loop *Node) bool {
	if !loop.Is("For", "AsyncFor") {
		return false
	}
	return anyToken(nameTokens(loop.K("iter")), batchWords...)
}

// usesCUDA reports any mention of CUDA in the file (x.cuda(), "cuda",
// torch.cuda...): outputs of a CPU-only script are not GPU memory.
func (f *file) usesCUDA() bool {
	if f.cuda == nil {
		v := false
		for _, n := range f.nodes("Attribute") {
			if n.S("attr") == "cuda" {
				v = true
				break
			}
		}
		for _, n := range f.nodes("Constant") {
			if s, ok := n.Value.(string); ok && !v && strings.Contains(s, "cuda") {
				v = true
			}
		}
		f.cuda = &v
	}
	return *f.cuda
}
