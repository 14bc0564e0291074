package lint

import (
	"regexp"
	"strings"
)

// dotted spells an expression the way rules compare receivers: Name "x",
// Attribute "self.model", Call "self.val_dataloader()", Subscript "d[]".
// Anything else is "".
func dotted(n *Node) string {
	switch n.TypeOr() {
	case "Name":
		return n.S("id")
	case "Attribute":
		base := dotted(n.K("value"))
		if base == "" {
			return ""
		}
		return base + "." + n.S("attr")
	case "Call":
		if f := dotted(n.K("func")); f != "" {
			return f + "()"
		}
	case "Subscript":
		if b := dotted(n.K("value")); b != "" {
			return b + "[]"
		}
	}
	return ""
}

// TypeOr is n.Type, or "" for a nil node.
func (n *Node) TypeOr() string {
	if n == nil {
		return ""
	}
	return n.Type
}

// lastName is the final identifier of a Name or Attribute ("model" for
// self.model), "" otherwise.
func lastName(n *Node) string {
	switch n.TypeOr() {
	case "Name":
		return n.S("id")
	case "Attribute":
		return n.S("attr")
	}
	return ""
}

// baseKey is the variable an accumulation writes to: "total" for total,
// "self.stats" for self.stats[k], "" when there is none.
func baseKey(n *Node) string {
	for n.Is("Subscript") {
		n = n.K("value")
	}
	if n.Is("Name", "Attribute") {
		return dotted(n)
	}
	return ""
}

// methodCall returns the receiver and method name of call recv.meth(...).
func methodCall(call *Node) (*Node, string) {
	if !call.Is("Call") {
		return nil, ""
	}
	f := call.K("func")
	if !f.Is("Attribute") {
		return nil, ""
	}
	return f.K("value"), f.S("attr")
}

// kwarg returns the value of keyword name in call, or nil.
func kwarg(call *Node, name string) *Node {
	for _, k := range call.L("keywords") {
		if k.S("arg") == name {
			return k.K("value")
		}
	}
	return nil
}

// hasStarKwargs reports a **kwargs in call, which may hold any keyword.
func hasStarKwargs(call *Node) bool {
	for _, k := range call.L("keywords") {
		if k.S("arg") == "" {
			return true
		}
	}
	return false
}

// constBool reports a literal True/False.
func constBool(n *Node) (val, ok bool) {
	if !n.Is("Constant") {
		return false, false
	}
	b, ok := n.Value.(bool)
	return b, ok
}

// constInt reports a literal integer.
func constInt(n *Node) (int, bool) {
	if !n.Is("Constant") {
		return 0, false
	}
	f, ok := n.Value.(float64)
	if !ok || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// constStr reports a literal string.
func constStr(n *Node) (string, bool) {
	if !n.Is("Constant") {
		return "", false
	}
	s, ok := n.Value.(string)
	return s, ok
}

var tokenSplit = regexp.MustCompile(`[^a-z0-9]+|(?:[0-9]+)`)

// nameTokens splits identifiers and strings under n into lower-case words:
// val_loader -> val, loader; dataloaders['val'] -> dataloaders, val.
func nameTokens(n *Node) map[string]bool {
	out := map[string]bool{}
	add := func(s string) { addWords(s, out) }
	n.Walk(func(c *Node) bool {
		switch c.Type {
		case "Name":
			add(c.S("id"))
		case "Attribute":
			add(c.S("attr"))
		case "Constant":
			if s, ok := c.Value.(string); ok && len(s) < 40 {
				add(s)
			}
		}
		return true
	})
	return out
}

// wordTokens splits one identifier into lower-case words.
func wordTokens(s string) map[string]bool {
	out := map[string]bool{}
	addWords(s, out)
	return out
}

func addWords(s string, out map[string]bool) {
	for _, t := range tokenSplit.Split(camelToSnake(s), -1) {
		if t != "" {
			out[t] = true
			splitGlued(t, out)
		}
	}
}

// camelToSnake lower-cases s, putting "_" before inner capitals so that
// valLoader splits like val_loader.
func camelToSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func anyToken(toks map[string]bool, words ...string) bool {
	for _, w := range words {
		if toks[w] {
			return true
		}
	}
	return false
}

// gluedSuffixes end words written without a separator: testloader,
// valset, traindl.
var gluedSuffixes = []string{"dataloader", "loader", "dataset", "set", "dl", "ds", "batches"}

// splitGlued adds the two halves of a glued word (testloader -> test,
// loader) so that the CIFAR tutorial's names read like val_loader.
func splitGlued(t string, out map[string]bool) {
	for _, suf := range gluedSuffixes {
		if len(t) > len(suf) && strings.HasSuffix(t, suf) {
			out[t[:len(t)-len(suf)]] = true
			out[suf] = true
			return
		}
	}
}
