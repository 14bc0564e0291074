package estimate

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// TestFSDPKeepsTheRoot: under FSDP the root unit (the tied embedding and
// head, the final norm: what no wrapped block holds) is unsharded from the
// forward through the backward, on top of every rank's shards, and the
// root's pre-backward prefetches the last block: at the peak (the loss's
// gradients) the weights are the shards, the root and that block, as the
// trace of FSDP2 (fully_shard per layer and the root) has them
// (bench/results/trace-real-scripts.md).
func TestFSDPKeepsTheRoot(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.2-1B")
	md.Layers = 2
	o := Options{Batch: 4, Seq: 2048, Precision: "amp-bf16", ZeroStage: 3, WorldSize: 8, Optimizer: "adamw"}
	weights := func(fsdp bool) int64 {
		o.FSDP = fsdp
		r, err := Estimate(md, o)
		if err != nil {
			t.Fatal(err)
		}
		return itemBytes(r, "weights")
	}
	root, all, last := unitSizes(md)
	fsdp, zero3 := weights(true), weights(false)
	if want := 4 * (all/8 + root + last); fsdp < want || fsdp > want+want/100 {
		t.Errorf("FSDP weights at the peak %d B, want the shards, the unsharded root and the last block, about %d B", fsdp, want)
	}
	// DeepSpeed's ZeRO-3 gathers the root's parameters on use: not kept.
	if zero3 >= fsdp-4*root/2 {
		t.Errorf("ZeRO-3 weights at the peak %d B: the root is FSDP's only (FSDP %d B)", zero3, fsdp)
	}
}

// TestFSDPMixedPrecision: FSDP's own mixed precision (param_dtype bf16)
// keeps fp32 shards and states and gathers the root and the blocks in
// bf16, which the model computes in: no autocast weight copies. The
// traced FSDP2 plain Llama (bench/trace/fsdp_llama_plain.py 2 ... mp) has
// exactly these weights at its peak.
func TestFSDPMixedPrecision(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.2-1B")
	md.Layers = 2
	o := Options{Batch: 4, Seq: 2048, Precision: "amp-bf16", ZeroStage: 3, FSDP: true, FSDPParamDType: "bf16",
		WorldSize: 8, Optimizer: "adamw"}
	r, err := Estimate(md, o)
	if err != nil {
		t.Fatal(err)
	}
	root, all, last := unitSizes(md)
	if w, want := itemBytes(r, "weights"), 4*all/8+2*(root+last); w < want || w > want+want/100 {
		t.Errorf("weights at the peak %d B, want fp32 shards and the bf16 root and last block, about %d B", w, want)
	}
	if s, want := itemBytes(r, "optimizer_states"), 2*4*all/8; s < want || s > want+want/100 {
		t.Errorf("optimizer states %d B, want AdamW's two fp32 states of the shards, about %d B", s, want)
	}
	if c := itemBytes(r, "autocast_weight_copies"); c != 0 {
		t.Errorf("autocast weight copies %d B: the gathered weights are bf16 already", c)
	}
	for _, bad := range []Options{
		{Precision: "bf16", ZeroStage: 3, FSDP: true, FSDPParamDType: "bf16"},
		{Precision: "amp-bf16", FSDPParamDType: "bf16"},
		{Precision: "fp32", ZeroStage: 3, FSDP: true, FSDPParamDType: "int8"},
	} {
		bad.Batch, bad.Seq, bad.WorldSize, bad.Optimizer = 1, 256, 8, "adamw"
		if _, err := Estimate(md, bad); err == nil || !strings.Contains(err.Error(), "--fsdp-param-dtype") {
			t.Errorf("%+v: error %v, want one naming --fsdp-param-dtype", bad, err)
		}
	}
}

// TestFSDPRootGradients: FSDP reduce-scatters the root unit's gradients
// at the end of the backward, so the tied embedding's unsharded fp32
// gradient is held through the blocks' backward (where a short sequence
// peaks), with the rank's gradient shards; DeepSpeed's ZeRO-3 is not
// modelled so.
func TestFSDPRootGradients(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.2-1B")
	md.Layers = 2
	root, all, _ := unitSizes(md)
	r, err := Estimate(md, Options{Batch: 1, Seq: 256, Precision: "amp-bf16", ZeroStage: 3, FSDP: true, WorldSize: 8, Optimizer: "adamw"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.PeakPhase, "backward") {
		t.Fatalf("peak at %q, want in the blocks' backward", r.PeakPhase)
	}
	if g, want := itemBytes(r, "gradients"), 4*(root+all/8); g < want {
		t.Errorf("gradients at the peak %d B, want at least the root's unsharded %d B and the shards", g, want)
	}
}

// unitSizes: the parameters of FSDP's root unit (outside the blocks), of
// the whole model and of its last block.
func unitSizes(md *models.Model) (root, all, last int64) {
	for _, p := range md.Params() {
		all += p.Elems
		switch p.Block {
		case -1:
			root += p.Elems
		case md.Layers - 1:
			last += p.Elems
		}
	}
	return root, all, last
}

// TestPlanOffersFSDPMixedPrecision: an FSDP job over fp32 weights that
// does not fit (Llama-3.1-70B under autocast on 64 GPUs: 200 GiB, as its
// FSDP2 trace says) is offered FSDP's own mixed precision, which keeps
// the fp32 master weights, and it fits.
func TestPlanOffersFSDPMixedPrecision(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.1-70B")
	base := Options{Batch: 1, Seq: 1024, Precision: "amp-bf16", ZeroStage: 3, FSDP: true, WorldSize: 64, Optimizer: "adamw"}
	ps, err := Search(md, base, int64(80e9), PlanRequest{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range ps.Combinations {
		found = found || strings.Contains(c.Flags, "--fsdp-param-dtype bf16") && c.Settings.Precision == "amp-bf16"
	}
	if !found {
		t.Errorf("no combination with --fsdp-param-dtype bf16 over the fp32 weights among %d", len(ps.Combinations))
	}
}

// TestFSDPOffload: with FSDP's CPU offload the GPU holds no shards, no
// sharded gradients and no optimizer states (the step runs on the host),
// only each unit gathered from shards copied in; the host holds this
// rank's fp32 shards, gradients and AdamW's two states, pinned. A world of
// one offloads too (the whole model copied in unit by unit). Offload is
// FSDP's, for training.
func TestFSDPOffload(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.2-1B")
	md.Layers = 2
	_, all, _ := unitSizes(md)
	for _, world := range []int{8, 1} {
		o := Options{Batch: 1, Seq: 256, Precision: "fp32", ZeroStage: 3, FSDP: true, FSDPParamDType: "bf16",
			WorldSize: world, Optimizer: "adamw"}
		on, off := o, o
		on.FSDPOffload = true
		r0, err := Estimate(md, off)
		if err != nil {
			t.Fatal(err)
		}
		r1, err := Estimate(md, on)
		if err != nil {
			t.Fatal(err)
		}
		if s := itemBytes(r1, "optimizer_states"); s != 0 {
			t.Errorf("world %d: optimizer states on the GPU %d B, want none", world, s)
		}
		// fp32 shards and two fp32 states leave the GPU at least
		if saved, want := r0.PeakAllocatedBytes-r1.PeakAllocatedBytes, 12*all/int64(world)*95/100; saved < want {
			t.Errorf("world %d: offload saves %d B at the peak, want at least %d", world, saved, want)
		}
		// (shards padded to the world: within world elements each)
		if h, want := r1.HostOffloadBytes, 16*all/int64(world); h < want || h > want+16*int64(world)*int64(len(md.Params())) {
			t.Errorf("world %d: host RAM %d B, want this rank's fp32 shards, gradients and two states, about %d", world, h, want)
		}
		if r0.HostOffloadBytes != 0 {
			t.Errorf("world %d: host RAM %d B without offload", world, r0.HostOffloadBytes)
		}
	}
	for _, bad := range []Options{
		{Precision: "fp32", FSDPOffload: true},
		{Precision: "fp32", ZeroStage: 3, FSDP: true, FSDPOffload: true, Inference: true},
	} {
		bad.Batch, bad.Seq, bad.WorldSize, bad.Optimizer = 1, 256, 8, "adamw"
		if _, err := Estimate(md, bad); err == nil || !strings.Contains(err.Error(), "--fsdp-offload") {
			t.Errorf("%+v: error %v, want one naming --fsdp-offload", bad, err)
		}
	}
}

// TestFSDPOffloadLever: Llama-3.1-70B under FSDP on one node of 8 does not
// fit an 80 GB GPU (its fp32 shards and AdamW states alone are 105 GB a
// rank); CPU offload is offered and fits.
func TestFSDPOffloadLever(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.1-70B")
	g, _ := LookupGPU("H100-80GB")
	_, f, err := Plan(md, Options{Batch: 1, Seq: 1024, Precision: "fp32", ZeroStage: 3, FSDP: true, FSDPParamDType: "bf16",
		WorldSize: 8, Optimizer: "adamw", Checkpointing: true}, g, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if f.Fits {
		t.Fatal("70B on 8 GPUs fits without offload: the case is not the one meant")
	}
	for _, l := range f.Levers {
		if l.Lever == "fsdp-offload" {
			if !l.Fits {
				t.Errorf("offload lever %+v: want it to fit", l)
			}
			return
		}
	}
	t.Errorf("no fsdp-offload lever among %+v", f.Levers)
}

// TestFSDPRootReduceAfterLastBlock: at the end of the backward the root's
// post-backward first lets the last block's reduce-scatter input go, then
// copies the root's gradients into one of its own (FSDP2's post_backward,
// foreach_reduce): at that peak the GPU holds the gradient shards, the
// root's bf16 gradients and its fp32 reduce-scatter input, not the last
// block's input as well (3.6 GiB over a traced 34.45 GiB peak for an
// 8 x 8,192 Llama at world 8, before).
func TestFSDPRootReduceAfterLastBlock(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.1-70B")
	md.Layers = 2
	root, all, last := unitSizes(md)
	r, err := Estimate(md, Options{Batch: 1, Seq: 128, Precision: "fp32", ZeroStage: 3, FSDP: true, FSDPParamDType: "bf16",
		WorldSize: 8, Optimizer: "adamw"})
	if err != nil {
		t.Fatal(err)
	}
	want := 4*all/8 + 2*root + 4*root // shards, root gradients, root's input
	if g := itemBytes(r, "gradients"); g < want || g > want+4*last/2 {
		t.Errorf("gradients at the peak (%s) %d B, want the shards, the root's and its reduce-scatter input, about %d B (the last block's input, %d B, gone)",
			r.PeakPhase, g, want, 4*last)
	}
}

// TestFSDPStreams: the built-in makes what FSDP2 makes on its own streams
// there: each unit's flat all-gather buffer on the copy-in stream (the
// root's the largest, cached there whole after it is copied out), the
// reduce-scatter inputs and the sharded gradients on the reduce-scatter
// stream; the default stream holds none of them.
func TestFSDPStreams(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.2-1B")
	md.Layers = 2
	e, err := walk(md, Options{Batch: 2, Seq: 1024, Precision: "amp-bf16", ZeroStage: 3, FSDP: true, WorldSize: 8,
		Optimizer: "adamw"})
	if err != nil {
		t.Fatal(err)
	}
	root, all, _ := unitSizes(md)
	held := map[int32]int64{}
	for _, h := range e.m.alloc.segs {
		held[h.stream] += h.size
	}
	if held[streamAllGather] < 4*root {
		t.Errorf("copy-in stream holds %d B, want at least the root's fp32 flat buffer %d B", held[streamAllGather], 4*root)
	}
	if held[streamReduceScatter] < 4*all/8 {
		t.Errorf("reduce-scatter stream holds %d B, want at least the sharded fp32 gradients %d B", held[streamReduceScatter], 4*all/8)
	}
	for s := range held {
		if s != 0 && s != streamAllGather && s != streamReduceScatter {
			t.Errorf("segments on stream %d", s)
		}
	}
}

// TestNCCLCommunicatorBuiltIn: a job of several GPUs holds an NCCL
// communicator on every rank: in nvidia-smi's figure and the breakdown,
// beyond reserved; one GPU holds none.
func TestNCCLCommunicatorBuiltIn(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.2-1B")
	md.Layers = 2
	for _, c := range []struct {
		o    Options
		want int64
	}{
		{Options{Batch: 2, Seq: 512, Precision: "amp-bf16", Optimizer: "adamw"}, 0},
		{Options{Batch: 2, Seq: 512, Precision: "amp-bf16", Optimizer: "adamw", DDP: true, WorldSize: 2}, ncclSmallWorldBytes},
		{Options{Batch: 2, Seq: 512, Precision: "amp-bf16", Optimizer: "adamw", ZeroStage: 3, FSDP: true, WorldSize: 8}, ncclBytesPerComm},
	} {
		r, err := Estimate(md, c.o)
		if err != nil {
			t.Fatal(err)
		}
		if n := itemBytes(r, "nccl_communicator"); n != c.want ||
			r.ProcessBytes != r.PeakReservedBytes+r.CUDAContextBytes+r.LibraryBytes+c.want {
			t.Errorf("world %d: communicator %d B, process %d B (reserved %d): want %d B beyond reserved, context and libraries",
				c.o.WorldSize, n, r.ProcessBytes, r.PeakReservedBytes, c.want)
		}
	}
}
