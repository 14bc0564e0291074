package estimate

import (
	"strings"
	"testing"
)

// TestZeroBucket: DeepSpeed's contiguous gradient bucket is
// reduce_bucket_size elements whatever the model's size (a traced
// 8M-parameter ZeRO-2 job holds 954 MiB of it in bf16): a 1B model under
// --zero 2 holds the 5e8-element default; --zero-bucket (the Trainer's
// "auto", hidden_size²) sets it; stage 1 and FSDP have none, and the
// option is refused for them.
func TestZeroBucket(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.2-1B")
	md.Layers = 2 // ~0.3B parameters: smaller than the default bucket
	o := Options{Batch: 1, Seq: 512, Precision: "bf16", ZeroStage: 2, WorldSize: 8, Optimizer: "adamw"}
	bucket := func(o Options) int64 {
		e, err := walk(md, o)
		if err != nil {
			t.Fatal(err)
		}
		if e.gradBucket == nil {
			return 0
		}
		return e.gradBucket.blk.size
	}
	if got, want := bucket(o), int64(2*DefaultZeroBucket); got < want || got > want+(2<<20) {
		t.Errorf("ZeRO-2 bucket %d B, want DeepSpeed's default %d elements in bf16 (%d B)", got, DefaultZeroBucket, want)
	}
	o.ZeroBucket = 2048 * 2048
	if got, want := bucket(o), int64(2*2048*2048); got < want || got > want+(2<<20) {
		t.Errorf("--zero-bucket 2048²: bucket %d B, want %d B", got, want)
	}
	o.ZeroBucket, o.ZeroStage = 0, 1
	if got := bucket(o); got != 0 {
		t.Errorf("ZeRO-1: a bucket of %d B, want none", got)
	}
	for _, bad := range []Options{
		{Batch: 1, Seq: 512, Precision: "bf16", ZeroStage: 1, WorldSize: 8, Optimizer: "adamw", ZeroBucket: 1000},
		{Batch: 1, Seq: 512, Precision: "bf16", ZeroStage: 3, FSDP: true, WorldSize: 8, Optimizer: "adamw", ZeroBucket: 1000},
		{Batch: 1, Seq: 512, Precision: "bf16", ZeroStage: 2, WorldSize: 8, Optimizer: "adamw", ZeroBucket: -1},
	} {
		if _, err := Estimate(md, bad); err == nil || !strings.Contains(err.Error(), "--zero-bucket") {
			t.Errorf("%+v: err %v, want --zero-bucket refused", bad, err)
		}
	}
}
