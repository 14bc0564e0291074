package estimate

import (
	"strings"
	"testing"
)

// TestZeroBucket: DeepSpeed's contiguous gradient bucket is
// reduce_bucket_size elements whatever the model's size (a traced
// 8M-parameter ZeRO-2 job holds 954 MiB of it in bf16): a 0.3B model under
// --zero 3 keeps the 5e8-element default; --zero-bucket (the Trainer's
// "auto", hidden_size²) sets it; stage 2 gives it back at the end of each
// backward, so its optimizer step runs without it; stage 1 and FSDP have
// none, and the option is refused for them.
func TestZeroBucket(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.2-1B")
	md.Layers = 2 // ~0.3B parameters: smaller than the default bucket
	o := Options{Batch: 1, Seq: 512, Precision: "bf16", ZeroStage: 3, WorldSize: 8, Optimizer: "adamw"}
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
		t.Errorf("ZeRO-3 bucket %d B, want DeepSpeed's default %d elements in bf16 (%d B)", got, DefaultZeroBucket, want)
	}
	o.ZeroBucket = 2048 * 2048
	if got, want := bucket(o), int64(2*2048*2048); got < want || got > want+(2<<20) {
		t.Errorf("--zero-bucket 2048²: bucket %d B, want %d B", got, want)
	}
	o.ZeroBucket, o.ZeroStage = 0, 2
	if got := bucket(o); got != 0 {
		t.Errorf("ZeRO-2: a bucket of %d B after the last backward, want none", got)
	}
	o.ZeroStage = 1
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

// TestZeroFP32GradPartition: DeepSpeed steps its fp32 master weights with
// an fp32 copy of rank 0's bf16 gradient partition: at a ZeRO-2 step of a
// bf16 model over 8 GPUs the gradients are the bf16 partition and that
// copy, 6 bytes per parameter over 8, as the trace of DeepSpeed 0.19's
// Trainer run of a Llama-2-7B shape has them (4,836 MiB; this estimate
// 4,858). (A small bucket, as the Trainer's "auto" makes, leaves the peak
// at the step.)
func TestZeroFP32GradPartition(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.2-1B")
	o := Options{Batch: 1, Seq: 64, Precision: "bf16", ZeroStage: 2, WorldSize: 8, Optimizer: "adamw",
		ZeroBucket: 2048 * 2048}
	r, err := Estimate(md, o)
	if err != nil {
		t.Fatal(err)
	}
	p := md.ParamCount()
	if !strings.HasPrefix(r.PeakPhase, "optimizer step") {
		t.Fatalf("peak at %q, want the optimizer step", r.PeakPhase)
	}
	if g, want := itemBytes(r, "gradients"), 6*p/8; g < want || g > want+want/50 {
		t.Errorf("gradients at the step %d B, want the bf16 partition and its fp32 copy, about %d B", g, want)
	}
}

// TestZeroOverlapComm: DeepSpeed's overlap_comm at stage 2 double-buffers
// the reduce bucket (setup_buckets' second buffer) through each backward:
// with the backward at the peak, the peak rises by one bucket. Traced on a
// Llama-2-7B shape the two buckets raised reserved from 32.97 to 34.80
// GiB. Stage 3 keeps one; FSDP and stage 1 refuse the option.
func TestZeroOverlapComm(t *testing.T) {
	md := moePreset(t, "meta-llama/Llama-3.2-1B")
	md.Layers = 2
	o := Options{Batch: 1, Seq: 512, Precision: "bf16", ZeroStage: 2, WorldSize: 8, Optimizer: "adamw"}
	peak := func(o Options) (int64, string) {
		r, err := Estimate(md, o)
		if err != nil {
			t.Fatal(err)
		}
		return r.PeakAllocatedBytes, r.PeakPhase
	}
	one, phase := peak(o)
	o.ZeroOverlapComm = true
	two, _ := peak(o)
	if !strings.HasPrefix(phase, "backward") && !strings.HasPrefix(phase, "start of backward") {
		t.Fatalf("peak at %q: want this job's peak in the backward", phase)
	}
	if d, want := two-one, int64(2*DefaultZeroBucket); d < want || d > want+(2<<20) {
		t.Errorf("overlap_comm raised the peak by %d B, want one more bucket (%d B)", d, want)
	}
	o.ZeroStage = 3
	three, _ := peak(o)
	o.ZeroOverlapComm = false
	if plain, _ := peak(o); plain != three {
		t.Errorf("stage 3: overlap_comm changed the peak (%d against %d)", three, plain)
	}
	o.ZeroOverlapComm, o.ZeroStage = true, 1
	if _, err := Estimate(md, o); err == nil || !strings.Contains(err.Error(), "--zero-overlap-comm") {
		t.Errorf("stage 1: err %v, want --zero-overlap-comm refused", err)
	}
}
