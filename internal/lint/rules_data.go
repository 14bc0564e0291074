package lint

import (
	"strings"
)

// Data-loading rules: TM006, TM007, TM013.

// datasetClasses are classes deriving from a *Dataset base.
func (f *file) datasetClasses() []*Node {
	var out []*Node
	for _, c := range f.nodes("ClassDef") {
		for _, b := range c.L("bases") {
			if strings.HasSuffix(lastName(b), "Dataset") {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

func method(cls *Node, name string) *Node {
	for _, s := range cls.L("body") {
		if s.Is("FunctionDef", "AsyncFunctionDef") && s.S("name") == name {
			return s
		}
	}
	return nil
}

func checkTM006(f *file) {
	for _, cls := range f.datasetClasses() {
		if !f.proj.workerClasses[cls.S("name")] {
			continue
		}
		init, get := method(cls, "__init__"), method(cls, "__getitem__")
		if init == nil || get == nil {
			continue
		}
		indexed, keyed := indexedAttrs(get)
		var hit []sampleAttr
		for _, a := range f.perSampleAttrs(init) {
			attr := dotted(a.target)
			if indexed[attr] || keyed[attr] && a.dict {
				hit = append(hit, a)
			}
		}
		if onlyPathStrings(hit) {
			continue // a few KiB of paths/prompts per worker: no evidence of scale
		}
		for _, a := range hit {
			f.report(a.at, "TM006", "tm006.objects", dotted(a.target), howMsg(a.how), cls.S("name"))
		}
	}
}

type sampleAttr struct {
	target *Node
	at     *Node
	how    string
	elem   *Node // one element's expression, where the code shows it
	dict   bool  // keyed by sample id rather than position
}

// perSampleAttrs finds self.x bound in __init__ to a structure with one
// Python object per sample: a comprehension, json/pickle loads, readlines,
// .tolist(), or a list appended to in a loop.
func (f *file) perSampleAttrs(init *Node) []sampleAttr {
	var out []sampleAttr
	empty := map[string]*Node{}
	walkScope(init, func(n *Node) {
		if !n.Is("Assign") || len(n.L("targets")) != 1 {
			return
		}
		tg := n.L("targets")[0]
		if !tg.Is("Attribute") || dotted(tg.K("value")) != "self" {
			return
		}
		if how := f.perSampleValue(n.K("value")); how != "" {
			v := n.K("value")
			out = append(out, sampleAttr{tg, n, how, elemOf(v), v.Is("DictComp") || strings.HasPrefix(how, "loaded")})
		} else if v := n.K("value"); (v.Is("List") && len(v.L("elts")) == 0) || (v.Is("Dict") && len(v.L("keys")) == 0) {
			empty[dotted(tg)] = n
		}
	})
	walkScope(init, func(n *Node) {
		recv, m := methodCall(n)
		if at, ok := empty[dotted(recv)]; ok && (m == "append" || m == "extend") && len(loopsOf(n)) > 0 {
			var el *Node
			if args := n.L("args"); m == "append" && len(args) == 1 {
				el = args[0]
			}
			out = append(out, sampleAttr{at.L("targets")[0], at, "a list appended to in a loop", el, false})
			delete(empty, dotted(recv))
		}
		if n.Is("Assign") && len(loopsOf(n)) > 0 {
			for _, tg := range n.L("targets") {
				if tg.Is("Subscript") {
					if at, ok := empty[dotted(tg.K("value"))]; ok {
						out = append(out, sampleAttr{at.L("targets")[0], at, "a dict filled in a loop", n.K("value"), true})
						delete(empty, dotted(tg.K("value")))
					}
				}
			}
		}
	})
	return out
}

func (f *file) perSampleValue(v *Node) string {
	switch v.TypeOr() {
	case "ListComp":
		return "a list comprehension"
	case "DictComp":
		return "a dict comprehension"
	case "Call":
		q := f.qualify(v.K("func"))
		_, m := methodCall(v)
		switch {
		case q == "json.load" || q == "json.loads" || q == "pickle.load" || q == "pickle.loads":
			return "loaded with " + q
		case m == "readlines":
			return "readlines()"
		case m == "tolist":
			return ".tolist()"
		case (q == "list" || q == "sorted") && len(v.L("args")) == 1:
			a := v.L("args")[0]
			if _, am := methodCall(a); a.Is("GeneratorExp") || am == "readlines" || am == "items" || am == "values" {
				return q + "(...)"
			}
		}
	}
	return ""
}

// indexedAttrs lists the per-sample self attributes: those __getitem__
// subscripts with its index argument (self.samples[idx], not
// self.classes[label]), and, in keyed, those it subscripts with an id field
// of a record fetched by that index (ref = self.refs[idx];
// self.scans[ref["scan_id"]]): a dict keyed by sample id.
func indexedAttrs(get *Node) (indexed, keyed map[string]bool) {
	indexed, keyed = map[string]bool{}, map[string]bool{}
	args := get.K("args").L("args")
	if len(args) < 2 {
		return indexed, keyed
	}
	idx := args[1].S("arg")
	derived := derivedFrom(get, idx)
	walkScope(get, func(n *Node) {
		if !n.Is("Subscript") {
			return
		}
		sl := n.K("slice")
		if sl.Is("Index") { // Python 3.8 wraps subscripts in Index
			sl = sl.K("value")
		}
		k := dotted(n.K("value"))
		if !strings.HasPrefix(k, "self.") {
			return
		}
		if sl.Is("Name") && sl.S("id") == idx {
			indexed[k] = true
		} else if isSampleIDField(sl, derived) {
			keyed[k] = true
		}
	})
	return indexed, keyed
}

// derivedFrom lists the locals of fn assigned from an expression that
// mentions name (directly or through another such local).
func derivedFrom(fn *Node, name string) map[string]bool {
	out := map[string]bool{name: true}
	for round := 0; round < 2; round++ {
		walkScope(fn, func(n *Node) {
			if !n.Is("Assign") || !mentionsAny(n.K("value"), out) {
				return
			}
			for _, tg := range n.L("targets") {
				tg.Walk(func(x *Node) bool {
					if x.Is("Name") {
						out[x.S("id")] = true
					}
					return x.Is("Tuple", "List", "Starred", "Name")
				})
			}
		})
	}
	return out
}

func mentionsAny(e *Node, names map[string]bool) bool {
	found := false
	e.Walk(func(x *Node) bool {
		if x.Is("Name") && names[x.S("id")] {
			found = true
		}
		return !found
	})
	return found
}

// isSampleIDField reports rec["scan_id"] / rec.image_id where rec was
// fetched by the sample index: an id, not a class label or category.
func isSampleIDField(sl *Node, derived map[string]bool) bool {
	var field string
	var base *Node
	switch {
	case sl.Is("Subscript"):
		inner := sl.K("slice")
		if inner.Is("Index") {
			inner = inner.K("value")
		}
		field, _ = constStr(inner)
		base = sl.K("value")
	case sl.Is("Attribute"):
		field, base = sl.S("attr"), sl.K("value")
	default:
		return false
	}
	if !base.Is("Name") || !derived[base.S("id")] {
		return false
	}
	toks := wordTokens(field)
	return (toks["id"] || toks["key"]) && !anyToken(toks, "cat", "category", "class", "label", "cls")
}
