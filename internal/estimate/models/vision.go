package models

import "fmt"

// Torchvision's ResNet and VisionTransformer, as built by
// torchvision.models.resnetNN() / vit_b_16() with default arguments.

func init() {
	register(ResNet, spec{params: resnetParams, vision: true, convolutional: true,
		blocks: func(m *Model) int { return m.ResNet[0] + m.ResNet[1] + m.ResNet[2] + m.ResNet[3] },
		validate: func(m *Model) error {
			if m.ResNet[0] == 0 {
				return fmt.Errorf("model %s: resnet block counts missing", m.Name)
			}
			return nil
		}}, nil)
	register(ViT, spec{params: vitParams, vision: true, validate: func(m *Model) error {
		if m.PatchSize <= 0 || m.ImageSize < m.PatchSize {
			return fmt.Errorf("model %s: patch_size must be positive and at most image_size", m.Name)
		}
		return nil
	}}, map[string]func(cfg) *Model{"vit": hfViTConfig})
}

// ResNetStage describes one of the four ResNet stages.
type ResNetStage struct {
	Width  int // planes: channels inside the block; Bottleneck outputs 4x
	Blocks int
	Stride int
}

// Stages returns the four stages of a torchvision ResNet.
func (m *Model) Stages() [4]ResNetStage {
	var s [4]ResNetStage
	for i := range s {
		s[i] = ResNetStage{Width: 64 << i, Blocks: m.ResNet[i], Stride: 2}
	}
	s[0].Stride = 1
	return s
}

// Expansion is the ratio of a block's output channels to its width.
func (m *Model) Expansion() int {
	if m.Bottleneck {
		return 4
	}
	return 1
}

func resnetParams(m *Model) []Param {
	var l plist
	conv := func(name string, blk, cin, cout, k int) {
		l.add(name+".weight", blk, true, cout, cin, k, k)
	}
	bn := func(name string, blk, c int) { l.norm(name, blk, c, true) }
	conv("conv1", -1, 3, 64, 7)
	bn("bn1", -1, 64)
	cin, blk := 64, 0
	for _, st := range m.Stages() {
		for i := 0; i < st.Blocks; i++ {
			w, out := st.Width, st.Width*m.Expansion()
			if m.Bottleneck {
				conv("conv1", blk, cin, w, 1)
				bn("bn1", blk, w)
				conv("conv2", blk, w, w, 3)
				bn("bn2", blk, w)
				conv("conv3", blk, w, out, 1)
				bn("bn3", blk, out)
			} else {
				conv("conv1", blk, cin, w, 3)
				bn("bn1", blk, w)
				conv("conv2", blk, w, w, 3)
				bn("bn2", blk, w)
			}
			if i == 0 && (st.Stride != 1 || cin != out) {
				conv("downsample.0", blk, cin, out, 1)
				bn("downsample.1", blk, out)
			}
			cin = out
			blk++
		}
	}
	l.linear("fc", -1, cin, m.Classes, true)
	return l
}

// Tokens is the number of tokens a ViT sees per image: patches plus the
// class token.
func (m *Model) Tokens(imageSize int) int {
	p := imageSize / m.PatchSize
	return p*p + 1
}

func vitParams(m *Model) []Param {
	var l plist
	h := m.Hidden
	l.add("conv_proj.weight", -1, true, h, 3, m.PatchSize, m.PatchSize)
	l.add("conv_proj.bias", -1, false, h)
	l.add("class_token", -1, false, h)
	l.add("encoder.pos_embedding", -1, false, m.Tokens(m.ImageSize), h)
	for i := 0; i < m.Layers; i++ {
		l.norm("ln_1", i, h, true)
		l.linear("self_attention.in_proj", i, h, 3*h, true)
		l.linear("self_attention.out_proj", i, h, h, true)
		l.norm("ln_2", i, h, true)
		l.linear("mlp.0", i, h, m.Intermediate, true)
		l.linear("mlp.3", i, m.Intermediate, h, true)
	}
	l.norm("encoder.ln", -1, h, true)
	l.linear("heads.head", -1, h, m.Classes, true)
	return l
}

// torchvisionModel builds a torchvision classifier by its constructor name.
func torchvisionModel(name string) (*Model, error) {
	resnets := map[string]struct {
		blocks     [4]int
		bottleneck bool
	}{
		"resnet18":  {[4]int{2, 2, 2, 2}, false},
		"resnet34":  {[4]int{3, 4, 6, 3}, false},
		"resnet50":  {[4]int{3, 4, 6, 3}, true},
		"resnet101": {[4]int{3, 4, 23, 3}, true},
		"resnet152": {[4]int{3, 8, 36, 3}, true},
	}
	if r, ok := resnets[name]; ok {
		return &Model{Name: name, Family: ResNet, ResNet: r.blocks, Bottleneck: r.bottleneck,
			Classes: 1000, ImageSize: 224}, nil
	}
	vits := map[string]struct{ patch, layers, heads, hidden, mlp int }{
		"vit_b_16": {16, 12, 12, 768, 3072},
		"vit_b_32": {32, 12, 12, 768, 3072},
		"vit_l_16": {16, 24, 16, 1024, 4096},
		"vit_l_32": {32, 24, 16, 1024, 4096},
		"vit_h_14": {14, 32, 16, 1280, 5120},
	}
	if v, ok := vits[name]; ok {
		return &Model{Name: name, Family: ViT, PatchSize: v.patch, Layers: v.layers, Heads: v.heads,
			KVHeads: v.heads, HeadDim: v.hidden / v.heads, Hidden: v.hidden, Intermediate: v.mlp,
			Activation: "gelu", ImageSize: 224, Classes: 1000}, nil
	}
	return nil, fmt.Errorf("unknown torchvision model %q (known: resnet18/34/50/101/152, vit_b_16, vit_b_32, vit_l_16, vit_l_32, vit_h_14)", name)
}
