package lint

import (
	"strings"
)

// TM016: a recurrent hidden state carried from one training iteration to
// the next without .detach(). Example of what it finds:
//
//	hidden = model.init_hidden(bsz)
//	for x, y in loader:
//	    out, hidden = model(x, hidden)        # fed back, never detached
//	    loss = criterion(out, y)
//	    loss.backward(retain_graph=True)      # TM012 alone would say: drop this
//
// Dropping retain_graph there makes the second backward fail ("Trying to
// backward through the graph a second time"); keeping it keeps every
// batch's graph. The fix is to detach the state between batches, as
// pytorch/examples' word_language_model does with repackage_hidden.

// recurrentCtors are the torch.nn classes whose output includes a state to
// feed back.
var recurrentCtors = map[string]bool{
	"LSTM": true, "GRU": true, "RNN": true, "LSTMCell": true, "GRUCell": true, "RNNCell": true,
}

func checkTM016(f *file) {
	f.checkTM016ModuleStates() // rules_rnn_module.go
	mods := f.recurrentModules()
	for _, st := range f.nodes("Assign") {
		call := st.K("value")
		if !call.Is("Call") || !f.isRecurrentCall(call, mods) || f.gradOff(call) {
			continue
		}
		var carried []string
		var loop *Node
		for _, h := range fedBack(st, call) {
			if l := f.carryingLoop(st, h); l != nil {
				carried, loop = append(carried, h), l
			}
		}
		if loop == nil {
			continue
		}
		id := "tm016.fed_back"
		if len(carried) > 1 {
			id = "tm016.fed_back_many"
		}
		if retainsGraph(loop) {
			id += "_retained"
		}
		f.report(call, "TM016", id, strings.Join(carried, ", "), dotted(call.K("func")), loop.Line)
	}
}

// isRecurrentCall: the callee is bound to an nn.LSTM/GRU/RNN (or a cell),
// or is a model of a file that builds one or defines init_hidden.
func (f *file) isRecurrentCall(call *Node, mods map[string]bool) bool {
	callee := dotted(call.K("func"))
	if callee == "" {
		return false
	}
	if mods[callee] {
		return true
	}
	if anyToken(wordTokens(lastName(call.K("func"))), "rnn", "lstm", "gru") {
		return true // rnn(x, h), self.encoder_lstm(x, h)
	}
	return f.isModelCall(call) && (len(mods) > 0 || len(f.defsNamed("init_hidden")) > 0)
}

// recurrentModules lists the dotted names bound to recurrent constructors.
func (f *file) recurrentModules() map[string]bool {
	out := map[string]bool{}
	for _, a := range f.nodes("Assign") {
		v := unwrapModelChain(a.K("value"))
		q := f.qualify(v.K("func"))
		if !v.Is("Call") || !strings.HasPrefix(q, "torch.nn.") || !recurrentCtors[lastName(v.K("func"))] {
			continue
		}
		for _, t := range a.L("targets") {
			out[dotted(t)] = true
		}
	}
	return out
}

// fedBack lists the names that are both an argument of call and a target
// of its statement: `out, hidden = model(x, hidden)`, `h, c = cell(x, (h, c))`.
func fedBack(st, call *Node) []string {
	args := map[string]bool{}
	for _, a := range call.L("args") {
		for _, n := range flatNames(a) {
			args[n] = true
		}
	}
	var out []string
	for _, t := range st.L("targets") {
		for _, n := range flatNames(t) {
			if args[n] {
				out = append(out, n)
			}
		}
	}
	return out
}

// flatNames spells a name, attribute, or tuple/list of them.
func flatNames(e *Node) []string {
	if e.Is("Tuple", "List") {
		var out []string
		for _, x := range e.L("elts") {
			out = append(out, flatNames(x)...)
		}
		return out
	}
	if d := dotted(e); e.Is("Name", "Attribute") && d != "" {
		return []string{d}
	}
	return nil
}

// carryingLoop is the innermost loop around st that backpropagates every
// iteration and carries h into the next one: nothing else in the loop
// re-binds h (a detach, repackage_hidden, init_hidden) or detaches it in
// place (h.detach_(), h[0].detach_()).
func (f *file) carryingLoop(st *Node, h string) *Node {
	for _, loop := range loopsOf(st) {
		if !bodyHas(loop.L("body"), func(n *Node) bool { _, ok := backwardOf(n); return ok }) {
			continue
		}
		if stateResetIn(loop, st, h) {
			return nil
		}
		return loop
	}
	return nil
}

// stateResetIn: the loop re-binds h in another statement or detaches it in
// place, or hands it to a function named for detaching.
func stateResetIn(loop, st *Node, h string) bool {
	return bodyHas(loop.L("body"), func(n *Node) bool {
		switch {
		case n.Is("Assign") && n != st:
			for _, t := range n.L("targets") {
				for _, x := range flatNames(t) {
					if x == h {
						return true
					}
				}
			}
		case n.Is("Call"):
			recv, m := methodCall(n)
			if (m == "detach_" || m == "zero_") && baseKey(recv) == h {
				return true // h.detach_(), h[0].detach_()
			}
			name := strings.ToLower(lastName(n.K("func")))
			if strings.Contains(name, "detach") || strings.Contains(name, "repackage") {
				for _, a := range n.L("args") {
					if baseKey(a) == h {
						return true // detach_hidden(h), in place
					}
				}
			}
		}
		return false
	})
}

// carriesHidden: the loop feeds a recurrent state back without detaching
// it (TM016), so TM012's "drop retain_graph" would be the wrong fix.
func (f *file) carriesHidden(loop *Node) bool {
	for _, s := range f.moduleStates() {
		if s.loop == loop {
			return true
		}
	}
	mods := f.recurrentModules()
	return bodyHas(loop.L("body"), func(n *Node) bool {
		call := n.K("value")
		if !n.Is("Assign") || !call.Is("Call") || !f.isRecurrentCall(call, mods) {
			return false
		}
		for _, h := range fedBack(n, call) {
			if f.carryingLoop(n, h) == loop {
				return true
			}
		}
		return false
	})
}

// retainsGraph: a backward(retain_graph=True) in the loop.
func retainsGraph(loop *Node) bool {
	return bodyHas(loop.L("body"), func(n *Node) bool {
		if _, ok := backwardOf(n); !ok {
			return false
		}
		v, ok := constBool(kwarg(n, "retain_graph"))
		return ok && v
	})
}
