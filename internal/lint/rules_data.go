package lint

import (
	"fmt"
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
		indexed := indexedAttrs(get)
		for _, a := range f.perSampleAttrs(init) {
			attr := dotted(a.target)
			if !indexed[attr] {
				continue
			}
			f.report(a.at, "TM006", fmt.Sprintf(
				"%s holds per-sample Python objects (%s) and %s is read by DataLoader workers: each worker gradually copies it (copy-on-read)",
				attr, a.how, cls.S("name")))
		}
	}
}

type sampleAttr struct {
	target *Node
	at     *Node
	how    string
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
			out = append(out, sampleAttr{tg, n, how})
		} else if v := n.K("value"); (v.Is("List") && len(v.L("elts")) == 0) || (v.Is("Dict") && len(v.L("keys")) == 0) {
			empty[dotted(tg)] = n
		}
	})
	walkScope(init, func(n *Node) {
		recv, m := methodCall(n)
		if at, ok := empty[dotted(recv)]; ok && (m == "append" || m == "extend") && len(loopsOf(n)) > 0 {
			out = append(out, sampleAttr{at.L("targets")[0], at, "a list appended to in a loop"})
			delete(empty, dotted(recv))
		}
		if n.Is("Assign") && len(loopsOf(n)) > 0 {
			for _, tg := range n.L("targets") {
				if tg.Is("Subscript") {
					if at, ok := empty[dotted(tg.K("value"))]; ok {
						out = append(out, sampleAttr{at.L("targets")[0], at, "a dict filled in a loop"})
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
// self.classes[label]).
func indexedAttrs(get *Node) map[string]bool {
	out := map[string]bool{}
	args := get.K("args").L("args")
	if len(args) < 2 {
		return out
	}
	idx := args[1].S("arg")
	walkScope(get, func(n *Node) {
		if !n.Is("Subscript") {
			return
		}
		sl := n.K("slice")
		if sl.Is("Index") { // Python 3.8 wraps subscripts in Index
			sl = sl.K("value")
		}
		if k := dotted(n.K("value")); strings.HasPrefix(k, "self.") && sl.Is("Name") && sl.S("id") == idx {
			out[k] = true
		}
	})
	return out
}
