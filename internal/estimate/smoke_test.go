package estimate

import (
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// TestEveryPresetEveryMode walks every built-in model through the modes a
// user can ask for: no panics, and the three figures are ordered.
func TestEveryPresetEveryMode(t *testing.T) {
	for _, name := range models.PresetNames() {
		md, err := models.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if md.ParamCount() > 2e9 {
			continue // keep the test fast: the 8B and 70B walks are covered elsewhere
		}
		for _, o := range everyMode {
			r, err := Estimate(md, o)
			if err != nil {
				if o.GenLen > 0 && md.Family != models.GPT2 && md.Family != models.Llama {
					continue
				}
				t.Errorf("%s %+v: %v", name, o, err)
				continue
			}
			if !(r.PeakAllocatedBytes > 0 && r.PeakAllocatedBytes <= r.PeakReservedBytes && r.PeakReservedBytes < r.ProcessBytes) {
				t.Errorf("%s %+v: allocated %d reserved %d process %d", name, o, r.PeakAllocatedBytes, r.PeakReservedBytes, r.ProcessBytes)
			}
			for _, it := range r.Breakdown {
				if it.Bytes < 0 {
					t.Errorf("%s %+v: negative %s", name, o, it.Name)
				}
			}
		}
	}
}

// TestNothingOutlivesTheJob: after the last step (zero_grad with
// set_to_none) or the last inference pass, only weights, optimizer states
// and the cuBLAS workspaces may still be allocated. A tensor the walk
// forgot to release would grow the estimate with every replayed step, as
// the last block's output under checkpointing once did.
func TestNothingOutlivesTheJob(t *testing.T) {
	kept := map[Category]bool{CatWeights: true, CatOptState: true, CatWorkspace: true}
	for _, name := range models.PresetNames() {
		md, err := models.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if md.ParamCount() > 2e9 {
			continue
		}
		for _, o := range everyMode {
			e, err := walk(md, o)
			if err != nil {
				continue // refused combinations are TestEveryPresetEveryMode's
			}
			left := e.m.cur
			if e.gradBucket != nil {
				left[CatGrads] -= e.gradBucket.blk.size
			}
			for _, b := range e.ddpBuckets {
				left[CatGrads] -= b.blk.size
			}
			for c := Category(0); c < numCats; c++ {
				if !kept[c] && left[c] != 0 {
					t.Errorf("%s %+v: %d bytes of %s still allocated at the end", name, o, left[c], c)
				}
			}
		}
	}
}

var everyMode = []Options{
	{Batch: 2, Seq: 128, Precision: "fp32"},
	{Batch: 2, Seq: 128, Precision: "amp-fp16", Checkpointing: true, Accum: 2},
	{Batch: 2, Seq: 128, Precision: "bf16", Attention: "eager", Optimizer: "sgd-momentum"},
	{Batch: 2, Seq: 128, Precision: "amp-bf16", ZeroStage: 3, WorldSize: 4, Optimizer: "adamw-8bit"},
	{Batch: 2, Seq: 128, Precision: "bf16", ZeroStage: 2, WorldSize: 2, Optimizer: "adafactor"},
	{Batch: 2, Seq: 128, Precision: "amp-bf16", DDP: true, WorldSize: 8, Accum: 2},
	{Batch: 2, Seq: 128, Precision: "bf16", DDP: true, DDPBucketView: true},
	{Batch: 2, Seq: 128, Precision: "bf16", Inference: true},
	{Batch: 2, Seq: 128, Precision: "amp-bf16", Inference: true, GenLen: 16},
}
