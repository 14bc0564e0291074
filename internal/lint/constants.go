package lint

import "strings"

// resolveInt finds the integer an expression stands for when the file makes
// it plain: a literal, a name assigned exactly once to a literal
// (NUM_WORKERS = 16), or args.workers whose argparse option has an integer
// default (parser.add_argument("-j", "--workers", default=4, type=int)).
func (f *file) resolveInt(e *Node) (int, bool) {
	if v, ok := constInt(e); ok {
		return v, true
	}
	switch e.TypeOr() {
	case "Name":
		var vals []*Node
		for _, a := range f.nodes("Assign") {
			for _, t := range a.L("targets") {
				if t.Is("Name") && t.S("id") == e.S("id") {
					vals = append(vals, a.K("value"))
				}
			}
		}
		if len(vals) == 1 {
			return constInt(vals[0])
		}
	case "Attribute":
		if e.K("value").Is("Name") {
			return f.argparseDefault(e.S("attr"))
		}
	}
	return 0, false
}

// argparseDefault returns the integer default of the add_argument option
// whose destination is dest ("--num-workers" -> num_workers, or dest=...).
func (f *file) argparseDefault(dest string) (int, bool) {
	for _, call := range f.nodes("Call") {
		if _, m := methodCall(call); m != "add_argument" {
			continue
		}
		if !argDest(call, dest) {
			continue
		}
		return constInt(kwarg(call, "default"))
	}
	return 0, false
}

func argDest(call *Node, dest string) bool {
	if d, ok := constStr(kwarg(call, "dest")); ok {
		return d == dest
	}
	var long, short string
	for _, a := range call.L("args") {
		s, ok := constStr(a)
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(s, "--"):
			if long == "" {
				long = s[2:]
			}
		case strings.HasPrefix(s, "-"):
			short = s[1:]
		default:
			long = s // a positional argument
		}
	}
	if long == "" {
		long = short
	}
	return long != "" && strings.ReplaceAll(long, "-", "_") == dest
}
