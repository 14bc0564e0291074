package lint

import "strings"

// Function summaries: what a function of the project does with the values
// passed to it, so that the taint pass follows a loss into a helper
// (record(history, loss)), a meter (meter.update(loss) whose update() does
// self.sum += val * n) or out of a function (total += compute_loss(...)).
//
// A summary is computed by running the same taint pass over the callee's
// body in summary mode (nothing is reported; accumulations into the
// callee's parameters, its self or a module global are recorded, and so is
// the taint of what it returns): once with every parameter clean (what the
// function adds by itself) and, lazily, once per parameter that a caller
// passes a tainted value to.

// accumInto says where a callee keeps an accumulated value.
type accumInto struct {
	param  int    // index of the parameter holding the container, or -1
	self   bool   // an attribute of the callee's self (a method)
	global string // a module-level name
}

// accumEffect is one accumulation a callee performs.
type accumEffect struct {
	into       accumInto
	t          taint
	appendLike bool
}

// summaryRec collects what one summary-mode pass saw.
type summaryRec struct {
	fn      *Node
	params  []string
	globals map[string]bool // names declared global in fn
	locals  map[string]bool // names bound in fn
	effects []accumEffect
	ret     taint
}

// paramRun is the outcome of one pass with one parameter (or none) tainted.
type paramRun struct {
	effects []accumEffect
	ret     taint
}

// funcSummary caches the passes over one function.
type funcSummary struct {
	fn     *Node
	file   *file
	params []string
	base   *paramRun         // every parameter clean
	byArg  map[int]*paramRun // one parameter holding history and model output
	busy   bool              // being computed: recursion sees an unknown function
}

// maxSummaryDepth bounds nested summary computations (helpers calling
// helpers); deeper calls are unknown, and unknown never fires.
const maxSummaryDepth = 4

// paramNames lists a def's positional and keyword parameter names in order.
func paramNames(fn *Node) []string {
	a := fn.K("args")
	var out []string
	for _, field := range []string{"posonlyargs", "args", "kwonlyargs"} {
		for _, p := range a.L(field) {
			out = append(out, p.S("arg"))
		}
	}
	return out
}

// summaryOf returns the summary of fn (nil while it is being computed or
// too deep).
func (p *project) summaryOf(fn *Node, f *file) *funcSummary {
	s, ok := p.summaries[fn]
	if !ok {
		s = &funcSummary{fn: fn, file: f, params: paramNames(fn), byArg: map[int]*paramRun{}}
		p.summaries[fn] = s
	}
	if s.busy || p.summaryDepth >= maxSummaryDepth {
		return nil
	}
	return s
}

// run returns the pass with parameter i tainted (i < 0: none).
func (s *funcSummary) run(p *project, i int) *paramRun {
	if i < 0 && s.base != nil {
		return s.base
	}
	if r, ok := s.byArg[i]; ok {
		return r
	}
	s.busy = true
	p.summaryDepth++
	rec := &summaryRec{fn: s.fn, params: s.params, globals: declaredGlobals(s.fn), locals: boundNames(s.fn)}
	fl := &flow{f: s.file, state: map[string]taint{}, backward: map[string]bool{}, sum: rec}
	if i >= 0 && i < len(s.params) {
		fl.state[s.params[i]] = taint{hist: true, out: true}
	}
	fl.stmts(s.fn.L("body"))
	p.summaryDepth--
	s.busy = false
	r := &paramRun{effects: rec.effects, ret: rec.ret}
	if i < 0 {
		s.base = r
	} else {
		s.byArg[i] = r
	}
	return r
}

// record notes an accumulation seen in summary mode when its container
// outlives the call: a parameter's, self's or a module global's.
func (rec *summaryRec) record(target string, t taint, appendLike bool) {
	if !t.any() {
		return
	}
	first, _, nested := strings.Cut(target, ".")
	into := accumInto{param: -1}
	switch {
	case first == "self" && nested && len(rec.params) > 0 && rec.params[0] == "self":
		into.self = true
	case indexOf(rec.params, first) > 0 || indexOf(rec.params, first) == 0 && first != "self":
		// acc += x on a bare parameter rebinds a local for numbers; only
		// container mutations (append, +=[...], acc[k] += x) reach the caller.
		if !nested && !appendLike && !strings.HasSuffix(target, "[]") {
			return
		}
		into.param = indexOf(rec.params, first)
	case rec.globals[first] || !rec.locals[first] && appendLike:
		into.global = first
	default:
		return
	}
	rec.effects = append(rec.effects, accumEffect{into: into, t: t, appendLike: appendLike})
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// declaredGlobals lists the names of `global` statements in fn's own body.
func declaredGlobals(fn *Node) map[string]bool {
	out := map[string]bool{}
	walkScope(fn, func(n *Node) {
		if n.Is("Global") {
			if names, ok := n.Get("names").([]string); ok {
				for _, s := range names {
					out[s] = true
				}
			}
		}
	})
	return out
}

// boundNames lists the plain names fn binds (parameters, assignments, loop
// and with targets, imports).
func boundNames(fn *Node) map[string]bool {
	out := map[string]bool{}
	for _, p := range paramNames(fn) {
		out[p] = true
	}
	walkScope(fn, func(n *Node) {
		if !n.Is("Name") {
			return
		}
		c := n
		for c.Parent.Is("Tuple", "List", "Starred") {
			c = c.Parent
		}
		switch c.Field {
		case "targets", "target", "optional_vars":
			out[n.S("id")] = true
		}
	})
	return out
}

// and keeps what both taints have: an argument's taint through an effect
// recorded with that parameter fully tainted.
func (a taint) and(b taint) taint { return taint{a.hist && b.hist, a.out && b.out} }
