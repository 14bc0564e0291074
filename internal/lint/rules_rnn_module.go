package lint

import (
	"strings"
)

// TM016, the module-state form (pytorch/pytorch#2769): the state lives on
// the module and forward feeds it back itself.
//
//	def forward(self, x):
//	    lstm_out, self.hidden = self.lstm(x, self.hidden)   # never detached
//	...
//	for x, y in loader:
//	    loss = criterion(model(x), y)
//	    loss.backward(retain_graph=True)

// moduleState is one `…, self.h = rnn(x, self.h)` in a forward method and
// the training loop of the same file that carries it across batches.
type moduleState struct {
	st, call, loop *Node
	h              string
}

// moduleStates lists the states forward keeps on self without detaching
// them, with a training loop that never resets them.
func (f *file) moduleStates() []moduleState {
	mods := f.recurrentModules()
	var out []moduleState
	for _, st := range f.nodes("Assign") {
		call := st.K("value")
		fn := enclosingFunc(st)
		if fn == nil || fn.S("name") != "forward" || !call.Is("Call") || !f.isRecurrentCall(call, mods) || f.gradOff(call) {
			continue
		}
		for _, h := range fedBack(st, call) {
			if !strings.HasPrefix(h, "self.") || stateResetIn(fn, st, h) {
				continue
			}
			if loop := f.stateKeepingLoop(strings.TrimPrefix(h, "self.")); loop != nil {
				out = append(out, moduleState{st, call, loop, h})
			}
		}
	}
	return out
}

// stateKeepingLoop is a loop of the file that backpropagates every
// iteration, calls a model, and neither re-binds <model>.attr nor calls an
// init_hidden/reset/detach/repackage function.
func (f *file) stateKeepingLoop(attr string) *Node {
	for _, loop := range f.nodes("For", "While") {
		body := loop.L("body")
		if !bodyHas(body, func(n *Node) bool { _, ok := backwardOf(n); return ok }) ||
			!bodyHas(body, func(n *Node) bool { return n.Is("Call") && f.isModelCall(n) }) {
			continue
		}
		resets := bodyHas(body, func(n *Node) bool {
			if n.Is("Assign") {
				for _, t := range n.L("targets") {
					if t.Is("Attribute") && t.S("attr") == attr {
						return true
					}
				}
			}
			name := strings.ToLower(lastName(n.K("func")))
			return n.Is("Call") && (strings.Contains(name, "hidden") || strings.Contains(name, "reset") ||
				strings.Contains(name, "detach") || strings.Contains(name, "repackage"))
		})
		if !resets {
			return loop
		}
	}
	return nil
}

func (f *file) checkTM016ModuleStates() {
	for _, s := range f.moduleStates() {
		id := "tm016.module_state"
		if retainsGraph(s.loop) {
			id += "_retained"
		}
		f.report(s.call, "TM016", id, s.h, dotted(s.call.K("func")), s.loop.Line)
	}
}
