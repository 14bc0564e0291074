package estimate

import (
	"strings"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// torchvision ResNet, op by op as eager PyTorch runs it. A unit is
// conv -> BatchNorm -> optional ReLU(inplace=True):
//   - the convolution saves its input (for the weight's gradient);
//   - BatchNorm (cudnn_batch_norm) makes a new output and saves its input,
//     the conv output, with per-channel statistics (small pool);
//   - the in-place ReLU saves its result, which is also the next conv's input.
// A block ends with out += identity and relu_(out), both in place.
//
// The backward pass allocates what autograd's kernels allocate, in the order
// its engine runs them: threshold_backward, cudnn_batch_norm_backward and
// cudnn_convolution_backward each make a new gradient the size of their
// input, and the one they consumed goes. The residual gradient is handed to
// both branches; the downsample branch, created last, runs first; the
// second gradient reaching a block's input is added in place into the first
// (autograd's InputBuffer reuses a buffer it holds the only reference to).
//
// cuDNN's convolution workspaces are not modelled: their size depends on the
// engine cuDNN's heuristics pick for each shape on each GPU.

// resnet is torchvision's ResNet (BasicBlock or Bottleneck).
type resnet struct{ familyDefaults }

func init() { registerFamily(models.ResNet, resnet{}) }

func (resnet) attention() bool { return false }

func (resnet) options(md *models.Model, o Options) (Options, error) { return imageOptions(md, o) }
func (resnet) images() bool                                         { return true }
func (resnet) classifierHead() bool                                 { return false }

// largestTensor: the stem convolution's output, 64 channels at full size.
func (resnet) largestTensor(_ *models.Model, o Options) float64 {
	return float64(o.Batch) * 64 * float64(o.ImageSize) * float64(o.ImageSize)
}

func (resnet) embed(e *ctx, data *tensor) *tensor     { return e.resnetStem(data) }
func (resnet) block(e *ctx, i int, x *tensor) *tensor { return e.resnetBlock(i, x) }
func (resnet) blockBackward(e *ctx, i, micro int)     { e.resnetBlockBackward(i, micro) }
func (resnet) stemBackward(e *ctx, micro int)         { e.resnetStemBackward(micro) }

// head: adaptive_avg_pool2d (which saves its input), then fc.
func (resnet) head(e *ctx, x *tensor) *tensor {
	b := int64(e.o.Batch)
	e.m.save(x)
	e.m.drop(x)
	feat := e.act(b*int64(x.elems/b)/int64(e.finalSpatial()), x.dt)
	return e.classifierHead(feat, resnetWidth(e.md))
}

func (resnet) outputElems(e *ctx) int64 {
	return int64(e.o.Batch) * int64(resnetWidth(e.md)) * int64(e.finalSpatial())
}

// resnetWidth is the channel count of the last stage's output.
func resnetWidth(md *models.Model) int { return 512 * md.Expansion() }

func convOut(h, k, s, p int) int { return (h+2*p-k)/s + 1 }

// unit is one conv -> bn (-> relu) with what autograd keeps of it.
type unit struct {
	in, c, b *tensor // conv input, conv output, bn output
	relu     bool
	params   []models.Param
}

// resBlock is what one block's forward leaves for its backward.
type resBlock struct {
	units []*unit
	ds    *unit
	out   *tensor
}

// convUnit runs conv -> bn (-> relu) on x. The caller still holds x; the
// convolution holds its input (x, or x's autocast copy) for its backward.
func (e *ctx) convUnit(x *tensor, outElems int64, relu bool, ps []models.Param) *unit {
	in := e.castIn(x)
	u := &unit{in: in, relu: relu, params: ps}
	u.c = e.act(outElems, e.dt.compute)
	e.convWorkspace(outElems * e.dt.compute)
	e.m.hold(in)
	if in != x {
		e.m.drop(in)
	}
	u.b = e.act(outElems, u.c.dt)
	e.m.save(u.c)
	e.m.drop(u.c)
	if relu {
		e.m.save(u.b)
	}
	return u
}

// unitBackward runs the unit's backward on g, the gradient of its output
// (let go of when consume says the unit holds its only reference), and
// returns the gradient of its input, nil where none is needed (the image).
func (e *ctx) unitBackward(u *unit, g *tensor, consume, inputGrad bool, micro int) *tensor {
	if u.relu {
		gr := e.m.new(u.b.elems, u.b.dt, CatActivations) // threshold_backward
		if consume {
			e.m.drop(g)
		}
		e.m.unsave(u.b)
		g, consume = gr, true
	}
	gc := e.m.new(u.c.elems, u.c.dt, CatActivations) // cudnn_batch_norm_backward
	if consume {
		e.m.drop(g)
	}
	e.m.unsave(u.c)
	var gin *tensor
	if inputGrad {
		gin = e.m.new(u.in.elems, u.c.dt, CatActivations)
		e.convWorkspace(u.in.elems * u.c.dt)
	}
	var wElems int64
	for _, p := range u.params {
		if p.Matmul {
			wElems += p.Elems
		}
	}
	e.convWorkspace(wElems * u.c.dt)
	e.paramGrads(u.params, micro)
	e.m.drop(gc)
	e.m.release(u.in)
	return gin
}

// unitParams splits a block's parameters by the module they belong to.
func unitParams(ps []models.Param, prefix string) []models.Param {
	var out []models.Param
	for _, p := range ps {
		if strings.HasPrefix(p.Name, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// resnetStem: conv1 -> bn1 -> relu -> maxpool, which saves its input and
// int64 indices of its output's size.
func (e *ctx) resnetStem(img *tensor) *tensor {
	b := int64(e.o.Batch)
	h := convOut(e.imageSize(), 7, 2, 3)
	e.stem = e.convUnit(img, b*64*int64(h*h), true, e.stemParams)
	x := e.stem.b
	h2 := convOut(h, 3, 2, 1)
	mp := e.act(b*64*int64(h2*h2), x.dt)
	e.poolIdx = e.act(mp.elems, 8)
	e.m.save(x, e.poolIdx)
	e.m.drop(e.poolIdx, x)
	return mp
}

// resnetStemBackward: max_pool2d_with_indices_backward makes a zeroed
// gradient of the pool's input, then the stem unit runs; the image needs
// no gradient.
func (e *ctx) resnetStemBackward(micro int) {
	gp := e.m.new(e.stem.b.elems, e.stem.b.dt, CatActivations)
	e.m.drop(e.dx)
	e.dx = nil
	e.m.unsave(e.poolIdx)
	e.unitBackward(e.stem, gp, true, false, micro)
	e.stem, e.poolIdx = nil, nil
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
	ps := e.blockParams[i]
	r := &resBlock{}
	unit := func(in *tensor, elems int64, relu bool, name string) *tensor {
		u := e.convUnit(in, elems, relu, unitParams(ps, name+"."))
		r.units = append(r.units, u)
		return u.b
	}
	var y *tensor
	if e.md.Bottleneck {
		a := unit(x, b*w*hw, true, "conv1")
		a = unit(a, b*w*hwo, true, "conv2")
		y = unit(a, b*out*hwo, false, "conv3")
	} else {
		a := unit(x, b*w*hwo, true, "conv1")
		y = unit(a, b*w*hwo, false, "conv2")
	}
	for _, u := range r.units[:len(r.units)-1] {
		e.m.drop(u.b) // the module's local variable is rebound
	}
	if j == 0 && (hin != hout || int64(cin) != out) {
		r.ds = e.convUnit(x, b*out*hwo, false, unitParams(ps, "downsample."))
		e.m.drop(r.ds.b) // added in place into y
	}
	e.m.drop(x)
	e.m.save(y) // out += identity; relu_(out) saves the result
	r.out = y
	e.res[i] = r
	return y
}

// resnetBlockBackward runs block i's backward on e.dx, the gradient of its
// output, and leaves the gradient of its input there.
func (e *ctx) resnetBlockBackward(i, micro int) {
	r := e.res[i]
	g := e.m.new(r.out.elems, r.out.dt, CatActivations) // relu_'s threshold_backward
	e.m.drop(e.dx)
	e.m.unsave(r.out)
	// AddBackward hands g to both branches. With a downsample branch, that
	// branch (made last in the forward) runs first and its gradient is the
	// first to reach the block's input; without one, g itself is.
	first := g
	if r.ds != nil {
		first = e.unitBackward(r.ds, g, false, true, micro)
	}
	gm, consume := g, r.ds != nil
	for k := len(r.units) - 1; k >= 0; k-- {
		gm = e.unitBackward(r.units[k], gm, consume, true, micro)
		consume = true
	}
	e.m.drop(gm) // added in place into first
	e.dx = first
	e.res[i] = nil
}

// cudnnConvWorkspace is the cuDNN workspace of one convolution that
// writes a tensor of written bytes: PyTorch takes it from the caching
// allocator for the call and frees it after, so it shows in the reserved
// memory (a segment the next tensors may not fit) rather than in what
// stays allocated. Its size is what the engine cuDNN's heuristics pick for
// the shape on the GPU, which is not knowable without cuDNN; it is
// modelled as the size of the tensor the convolution writes (the output
// forward, the input's gradient and the weight's gradient backward). On
// the one measured ResNet row (ResNet-50, batch 64, fp32, H200) that takes
// reserved from -5.7 % to -0.6 % and nvidia-smi from -5.3 % to -0.6 %,
// peak allocated unchanged; 0.9x and 1.1x the size give -0.9 % and
// +1.5 %. The built-in walk and the trace replay both take it from here.
func cudnnConvWorkspace(written int64) int64 {
	return written
}

func (e *ctx) convWorkspace(bytes int64) {
	if w := cudnnConvWorkspace(bytes); w > 0 {
		e.m.drop(e.m.new(w, 1, CatWorkspace))
	}
}
