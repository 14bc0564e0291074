package lint

// Node is one node of a Python ast, as printed by the embedded helper
// (helper.py): {"_": "Call", "l": 12, "c": 4, "func": {...}, "args": [...]}.
// Fields holds the child values: *Node, []*Node (nil entries allowed, as in
// Dict.keys), []string (Global.names), string or int. Constant nodes keep
// their value in Value (string, bool, float64 or nil).
type Node struct {
	Type string
	Line int // 1-based; 0 for nodes without a position (Module, arguments)
	Col  int // 0-based UTF-8 byte offset, as Python's col_offset
	// EndLine is the last line of a multi-line statement (0 otherwise).
	EndLine int
	Fields  []Field
	Value   any
	Parent  *Node
	Field   string // name of the field of Parent that holds this node
	kids    []*Node
}

// Field is one named child value of a node. A node has a handful, so a
// slice scanned linearly beats a map both to build and to read.
type Field struct {
	Name  string
	Value any
}

// Get returns the value of field name, or nil.
func (n *Node) Get(name string) any {
	if n == nil {
		return nil
	}
	for i := range n.Fields {
		if n.Fields[i].Name == name {
			return n.Fields[i].Value
		}
	}
	return nil
}

// maxDepth bounds the nesting accepted from the helper; Python's own parser
// stops far below it.
const maxDepth = 5000

// collectKids lists the child nodes in the helper's field order (Python's
// _fields order, so deterministic), list entries in order.
func collectKids(fields []Field) []*Node {
	count := 0
	for _, f := range fields {
		switch c := f.Value.(type) {
		case *Node:
			count++
		case []*Node:
			count += len(c)
		}
	}
	if count == 0 {
		return nil
	}
	out := make([]*Node, 0, count)
	for _, f := range fields {
		switch c := f.Value.(type) {
		case *Node:
			out = append(out, c)
		case []*Node:
			for _, e := range c {
				if e != nil {
					out = append(out, e)
				}
			}
		}
	}
	return out
}

func intOf(v any) int {
	if f, ok := v.(float64); ok && f >= 0 && f < 1<<31 {
		return int(f)
	}
	return 0
}

// K returns the child node in field name, or nil.
func (n *Node) K(name string) *Node {
	if n == nil {
		return nil
	}
	c, _ := n.Get(name).(*Node)
	return c
}

// L returns the list of child nodes in field name (entries may be nil).
func (n *Node) L(name string) []*Node {
	if n == nil {
		return nil
	}
	c, _ := n.Get(name).([]*Node)
	return c
}

// S returns the string in field name ("" if absent).
func (n *Node) S(name string) string {
	if n == nil {
		return ""
	}
	s, _ := n.Get(name).(string)
	return s
}

// Is reports whether n is non-nil and of one of the given types.
func (n *Node) Is(types ...string) bool {
	if n == nil {
		return false
	}
	for _, t := range types {
		if n.Type == t {
			return true
		}
	}
	return false
}

// Walk calls fn for n and every node below it, fields in Python's order
// (rules that care about source order still compare line numbers). fn
// returning false skips the node's children.
func (n *Node) Walk(fn func(*Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for _, c := range n.kids {
		c.Walk(fn)
	}
}
