package models

import "fmt"

// What the models package knows of a family, registered once by the file
// that describes the family (params.go, vision.go, moe.go): its parameter
// layout, how many blocks Params numbers, the checks only it needs, and
// the config.json model_types it is built from. Params, BlockCount,
// Validate and ParseConfig look a family up here instead of switching on
// it, so a new family is one file here and one in the estimator.
type spec struct {
	params func(*Model) []Param
	// blocks is the number of repeated blocks; nil: m.Layers.
	blocks func(*Model) int
	// validate checks what only this family has; nil: the transformer
	// checks alone.
	validate func(*Model) error
	// vision: an image model (no vocabulary, no sequence-classification
	// head read from architectures).
	vision bool
	// convolutional: no transformer dimensions to check.
	convolutional bool
}

var specs = map[Family]spec{}

// register adds a family and the config.json model_types that build it.
func register(f Family, s spec, configs map[string]func(cfg) *Model) {
	if _, dup := specs[f]; dup {
		panic("models: family registered twice: " + string(f))
	}
	specs[f] = s
	for mt, b := range configs {
		if _, dup := builders[mt]; dup {
			panic("models: model_type registered twice: " + mt)
		}
		builders[mt] = b
	}
}

// Families lists the registered families.
func Families() []Family {
	out := make([]Family, 0, len(specs))
	for f := range specs {
		out = append(out, f)
	}
	return out
}

func specOf(m *Model) (spec, error) {
	s, ok := specs[m.Family]
	if !ok {
		return spec{}, fmt.Errorf("model %s: unknown family %q", m.Name, m.Family)
	}
	return s, nil
}

// IsVision reports whether m's family takes images.
func (m *Model) IsVision() bool { return specs[m.Family].vision }
