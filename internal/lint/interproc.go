package lint

import (
	"strings"
)

// The taint pass across calls (summaries in summary.go): what a project
// function returns, what it accumulates of its arguments, and Lightning's
// per-step hooks, whose loop is the trainer's.

// calleeReturn is the taint of a call to a project function: what the
// function returns by itself, plus what flows from each tainted argument
// to its return value. A call made with autograd off returns no history.
func (fl *flow) calleeReturn(call *Node, c callee, gradOn bool) taint {
	p := fl.f.proj
	s := p.summaryOf(c.fn, c.file)
	if s == nil {
		return taint{}
	}
	t := s.run(p, -1).ret
	fl.eachArg(call, c, s, func(i int, at taint) {
		t = t.or(at.and(s.run(p, i).ret))
	})
	if !gradOn {
		t.hist = false
	}
	return t
}

// calleeEffects replays, at a call statement, the accumulations the
// callee makes of its tainted arguments: record(history, loss) appends
// loss to history; meter.update(loss) adds it to meter's own totals.
func (fl *flow) calleeEffects(stmt, call *Node) {
	if !call.Is("Call") {
		return
	}
	c, ok := fl.f.resolveCall(call)
	if !ok {
		return
	}
	p := fl.f.proj
	s := p.summaryOf(c.fn, c.file)
	if s == nil {
		return
	}
	fl.eachArg(call, c, s, func(i int, at taint) {
		for _, e := range s.run(p, i).effects {
			if e.into.param == i {
				continue
			}
			if target := fl.containerAt(call, c, s, e.into); target != "" {
				fl.accum(stmt, target, at.and(e.t), e.appendLike)
			}
		}
	})
}

// eachArg calls fn with the parameter index and taint of every tainted
// argument of call.
func (fl *flow) eachArg(call *Node, c callee, s *funcSummary, fn func(int, taint)) {
	for i, a := range call.L("args") {
		if a.Is("Starred") {
			break
		}
		if t := fl.expr(a); t.any() {
			if pi := c.paramIndex(s.params, i, ""); pi >= 0 {
				fn(pi, t)
			}
		}
	}
	for _, k := range call.L("keywords") {
		if name := k.S("arg"); name != "" {
			if t := fl.expr(k.K("value")); t.any() {
				if pi := c.paramIndex(s.params, 0, name); pi >= 0 {
					fn(pi, t)
				}
			}
		}
	}
}

// containerAt names, in the caller's terms, where a callee accumulates:
// the argument passed for that parameter, the method's receiver, or the
// global.
func (fl *flow) containerAt(call *Node, c callee, s *funcSummary, into accumInto) string {
	switch {
	case into.self:
		return dotted(c.recv)
	case into.global != "":
		if c.file != fl.f {
			return "" // another module's global: its loops are not ours to judge
		}
		return into.global
	case into.param >= 0:
		args := call.L("args")
		i := into.param
		if c.method {
			i--
		}
		if i >= 0 && i < len(args) && !args[i].Is("Starred") {
			return baseKey(args[i])
		}
		if into.param < len(s.params) {
			if v := kwarg(call, s.params[into.param]); v != nil {
				return baseKey(v)
			}
		}
	}
	return ""
}

// accum routes one accumulation: recorded in summary mode, judged as a
// per-step hook's in a Lightning training_step, else by onAccum.
func (fl *flow) accum(stmt *Node, target string, t taint, appendLike bool) {
	if fl.sum != nil {
		fl.sum.record(target, t, appendLike)
		return
	}
	if fl.stepHook && strings.HasPrefix(target, "self.") && t.hist && !fl.backward[target] {
		fl.f.report(stmt, "TM002", "tm002.training_step", target)
		return
	}
	fl.onAccum(stmt, target, t, appendLike)
}

// startScope sets what the first statement tells about the scope: a
// Lightning training_step returns its loss to the trainer, which calls
// backward on it, so the returned names hold history.
func (fl *flow) startScope(fn *Node) {
	if fn == nil || fn.S("name") != "training_step" || !fl.f.inModuleClass(fn) {
		return
	}
	fl.stepHook = true
	walkScope(fn, func(n *Node) {
		if !n.Is("Return") {
			return
		}
		v := n.K("value")
		if v.Is("Dict") {
			for i, k := range v.L("keys") {
				if s, ok := constStr(k); ok && s == "loss" && i < len(v.L("values")) {
					v = v.L("values")[i]
				}
			}
		}
		if k := dotted(v); k != "" && v.Is("Name", "Attribute") {
			fl.backward[k] = true
			fl.anyBackward = true
		}
	})
}
