package estimate

import "strings"

// A site (one line of the program, one op) is often run by many modules:
// an RMSNorm's forward by every layer's norms, a Linear's by every
// projection. The module a site names must hold for all of its memory,
// not for whichever block came first: the layers' numbers become N
// (model.layers.N.mlp.up_proj), and modules that still differ are named by
// what they share (model.layers.N.*), or not at all.

// anyModule ends a site's module that stands for several below it.
const anyModule = ".*"

// modulePattern: a module's name with its numbered parts as N
// (model.layers.3.self_attn: model.layers.N.self_attn).
func modulePattern(module string) string {
	if module == "" {
		return ""
	}
	parts := strings.Split(module, ".")
	for i, p := range parts {
		if allDigits(p) {
			parts[i] = "N"
		}
	}
	return strings.Join(parts, ".")
}

// mergeModules: the pattern that holds for two (model.layers.N.self_attn
// .k_norm and model.layers.N.input_layernorm: model.layers.N.*); "" when
// they share nothing, or one has no module. The same whatever the order
// the blocks come in.
func mergeModules(a, b string) string {
	if a == b {
		return a
	}
	if a == "" || b == "" {
		return ""
	}
	pa := strings.Split(strings.TrimSuffix(a, anyModule), ".")
	pb := strings.Split(strings.TrimSuffix(b, anyModule), ".")
	n := 0
	for n < len(pa) && n < len(pb) && pa[n] == pb[n] {
		n++
	}
	if n == 0 {
		return ""
	}
	return strings.Join(pa[:n], ".") + anyModule
}
