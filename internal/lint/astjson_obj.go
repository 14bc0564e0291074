package lint

// object reads a JSON object. One whose first key is "_" is an ast node.
func (d *astDecoder) object(parent *Node, field string, depth int) (any, error) {
	d.i++ // {
	var n *Node
	var m map[string]any
	first := true
	for {
		d.ws()
		if d.i >= len(d.b) {
			return nil, d.errf("unterminated object")
		}
		if d.b[d.i] == '}' {
			d.i++
			break
		}
		if !first {
			if d.b[d.i] != ',' {
				return nil, d.errf("expected , in object")
			}
			d.i++
			d.ws()
		}
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, d.errf("expected key")
		}
		key, err := d.str()
		if err != nil {
			return nil, err
		}
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, d.errf("expected :")
		}
		d.i++
		if first && key == "_" {
			n = &Node{Parent: parent, Field: field}
		} else if first {
			m = map[string]any{}
		}
		first = false
		if n != nil && (key == "l" || key == "c" || key == "e") {
			// Positions: read the integer in place; boxing two float64s
			// per node into interfaces was a third of all allocations.
			if v, ok := d.smallInt(); ok {
				switch key {
				case "l":
					n.Line = v
				case "c":
					n.Col = v
				default:
					n.EndLine = v
				}
				continue
			}
		}
		v, err := d.value(n, key, depth+1)
		if err != nil {
			return nil, err
		}
		if n == nil {
			m[key] = v
			continue
		}
		if err := d.setField(n, key, v); err != nil {
			return nil, err
		}
	}
	if n != nil {
		if n.Type == "" {
			return nil, d.errf("node without a type")
		}
		n.kids = collectKids(n.Fields)
		return n, nil
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

func (d *astDecoder) setField(n *Node, key string, v any) error {
	switch key {
	case "_":
		s, ok := v.(string)
		if !ok {
			return d.errf("node type is %T, not a string", v)
		}
		n.Type = s
		return nil
	case "l":
		n.Line = intOf(v)
		return nil
	case "c":
		n.Col = intOf(v)
		return nil
	case "e":
		n.EndLine = intOf(v)
		return nil
	case "value":
		if n.Type == "Constant" {
			n.Value = v
			return nil
		}
	}
	var fv any
	switch x := v.(type) {
	case *Node, string:
		fv = x
	case float64:
		fv = intOf(x)
	case []any:
		l, err := d.listField(n, key, x)
		if err != nil {
			return err
		}
		fv = l
	default:
		return nil // bools, nulls and plain objects carry nothing rules use
	}
	if n.Fields == nil {
		n.Fields = make([]Field, 0, 4) // nodes have a handful of fields
	}
	n.Fields = append(n.Fields, Field{key, fv})
	return nil
}

// listField keeps a list of nodes (nil where Python had None) or of strings
// (Global.names).
func (d *astDecoder) listField(n *Node, key string, xs []any) (any, error) {
	if len(xs) > 0 {
		if _, isStr := xs[0].(string); isStr {
			out := make([]string, 0, len(xs))
			for _, e := range xs {
				if s, ok := e.(string); ok {
					out = append(out, s)
				}
			}
			return out, nil
		}
	}
	out := make([]*Node, len(xs))
	for i, e := range xs {
		switch c := e.(type) {
		case *Node:
			out[i] = c
		case nil:
		default:
			return nil, d.errf("%s.%s[%d] is %T, not a node", n.Type, key, i, e)
		}
	}
	return out, nil
}

func (d *astDecoder) array(parent *Node, field string, depth int) (any, error) {
	d.i++ // [
	var out []any
	for {
		d.ws()
		if d.i >= len(d.b) {
			return nil, d.errf("unterminated array")
		}
		if d.b[d.i] == ']' {
			d.i++
			return out, nil
		}
		if len(out) > 0 {
			if d.b[d.i] != ',' {
				return nil, d.errf("expected , in array")
			}
			d.i++
		}
		v, err := d.value(parent, field, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}

// decodeTop reads one whole JSON document and checks nothing follows it.
func (d *astDecoder) decodeTop() (any, error) {
	v, err := d.value(nil, "", 0)
	if err != nil {
		return nil, err
	}
	d.ws()
	if d.i != len(d.b) {
		return nil, d.errf("trailing data")
	}
	return v, nil
}

// smallInt reads a plain non-negative integer (up to 9 digits) that is
// followed by a JSON delimiter; anything else leaves the position alone
// and reports false, so the general number path handles it.
func (d *astDecoder) smallInt() (int, bool) {
	d.ws()
	j, v := d.i, 0
	for j < len(d.b) && j-d.i < 9 && d.b[j] >= '0' && d.b[j] <= '9' {
		v = v*10 + int(d.b[j]-'0')
		j++
	}
	if j == d.i || j >= len(d.b) || (d.b[d.i] == '0' && j-d.i > 1) {
		return 0, false
	}
	switch d.b[j] {
	case ',', '}', ' ', '\n', '\t', '\r':
		d.i = j
		return v, true
	}
	return 0, false
}
