package estimate

// torchvision ResNet: conv (saves its input) -> BatchNorm (saves its input:
// the conv output) -> ReLU(inplace=True) (saves its result, which is the
// BN output and the next conv's input). The stem's max-pool also saves
// int64 indices.

func convOut(h, k, s, p int) int { return (h+2*p-k)/s + 1 }

// conv is a convolution: a GEMM as far as saving goes. The cuDNN workspace
// it asks the caching allocator for while it runs is transient and depends
// on the algorithm cuDNN's heuristics pick; it is not modelled (it shows in
// the reserved memory of convolutional nets, not in their allocated peak).
func (e *ctx) conv(x *tensor, outElems int64) *tensor {
	return e.linear(x, outElems)
}

func (e *ctx) resnetStem(img *tensor) *tensor {
	b := int64(e.o.Batch)
	h := convOut(e.imageSize(), 7, 2, 3)
	c := e.conv(img, b*64*int64(h*h))
	x := e.bnRelu(c, true)
	h2 := convOut(h, 3, 2, 1)
	mp := e.act(b*64*int64(h2*h2), x.dt)
	idx := e.act(mp.elems, 8)
	e.m.save(x, idx)
	e.m.drop(idx, x)
	return mp
}

// bnRelu is BatchNorm (cuDNN keeps the input and small statistics), then
// an optional in-place ReLU whose result is saved.
func (e *ctx) bnRelu(c *tensor, relu bool) *tensor {
	out := e.act(c.elems, c.dt)
	e.m.save(c)
	e.m.drop(c)
	if relu {
		e.m.save(out)
	}
	return out
}

// blockShape returns stage, in-stage index, input and output resolution.
func (e *ctx) blockShape(i int) (stage, j, hin, hout, cin int) {
	h := convOut(convOut(e.imageSize(), 7, 2, 3), 3, 2, 1)
	cin = 64
	for s, st := range e.md.Stages() {
		for k := 0; k < st.Blocks; k++ {
			stride := 1
			if k == 0 {
				stride = st.Stride
			}
			ho := convOut(h, 3, stride, 1)
			if i == 0 {
				return s, k, h, ho, cin
			}
			i--
			h, cin = ho, st.Width*e.md.Expansion()
		}
	}
	return 0, 0, h, h, cin
}

func (e *ctx) finalSpatial() int {
	_, _, _, ho, _ := e.blockShape(e.md.BlockCount() - 1)
	return ho * ho
}

func (e *ctx) resnetBlock(i int, x *tensor) *tensor {
	stage, j, hin, hout, cin := e.blockShape(i)
	b := int64(e.o.Batch)
	w := int64(e.md.Stages()[stage].Width)
	out := w * int64(e.md.Expansion())
	hw, hwo := int64(hin*hin), int64(hout*hout)
	var y *tensor
	if e.md.Bottleneck {
		a := e.bnRelu(e.conv(x, b*w*hw), true)
		c := e.conv(a, b*w*hwo)
		e.m.drop(a)
		a = e.bnRelu(c, true)
		c = e.conv(a, b*out*hwo)
		e.m.drop(a)
		y = e.bnRelu(c, false)
	} else {
		a := e.bnRelu(e.conv(x, b*w*hwo), true)
		c := e.conv(a, b*w*hwo)
		e.m.drop(a)
		y = e.bnRelu(c, false)
	}
	if j == 0 && (hin != hout || int64(cin) != out) {
		d := e.bnRelu(e.conv(x, b*out*hwo), false)
		e.m.drop(d) // added in place into y
	}
	e.m.drop(x)
	e.m.save(y) // out += identity; relu_(out) saves the result
	return y
}
