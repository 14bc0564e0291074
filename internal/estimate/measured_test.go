package estimate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readRows writes JSON lines to a file and reads them back as a harness's
// calibration file would be read.
func readRows(t *testing.T, lines ...string) ([]Measured, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rows.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ReadCalibration(p)
}

func TestMeasuredOptions(t *testing.T) {
	cases := []struct {
		row  string
		want Options
	}{
		{`{"id":"a","batch":8,"seq":512,"precision":"fp32","optim":"adamw","mode":"train"}`,
			Options{Batch: 8, Seq: 512, Precision: "fp32", Optimizer: "adamw"}},
		{`{"id":"b","batch":4,"seq":1024,"precision":"amp_fp16_scaler","optim":"adamw_torch_fused","mode":"train","grad_accum":4,"gradient_checkpointing":true}`,
			Options{Batch: 4, Seq: 1024, Precision: "amp-fp16", Optimizer: "adamw", OptimizerImpl: "fused", Accum: 4, Checkpointing: true}},
		{`{"id":"c","batch":2,"seq":256,"precision":"bf16","optim":null,"mode":"generate","max_new_tokens":128,"attn_impl":"eager","load_fp32":false}`,
			Options{Batch: 2, Seq: 256, Precision: "bf16", Inference: true, KVCache: true, GenLen: 128, Attention: "eager", NoLoadFP32: true}},
		{`{"id":"d","batch":1,"seq":2048,"precision":"bf16","optim":"adamw","mode":"train","zero_stage":3,"world_size":8,"checkpointing":"full","gpu":"NVIDIA A100-SXM4-80GB"}`,
			Options{Batch: 1, Seq: 2048, Precision: "bf16", Optimizer: "adamw", ZeroStage: 3, WorldSize: 8, Checkpointing: true, ComputeCapability: 80}},
		{`{"id":"e","batch":64,"precision":"fp32","optim":"sgd_momentum","mode":"train","image_size":160,"attn_impl":null}`,
			Options{Batch: 64, Precision: "fp32", Optimizer: "sgd-momentum", ImageSize: 160}},
		{`{"id":"f","batch":8,"seq":1024,"precision":"bf16","optim":null,"mode":"infer","use_cache":true}`,
			Options{Batch: 8, Seq: 1024, Precision: "bf16", Inference: true, KVCache: true}},
		{`{"id":"g","batch":8,"seq":1024,"precision":"amp-bf16","optim":"adamw","mode":"train","ddp":true,"gradient_as_bucket_view":true,"world_size":4}`,
			Options{Batch: 8, Seq: 1024, Precision: "amp-bf16", Optimizer: "adamw", DDP: true, DDPBucketView: true, WorldSize: 4}},
	}
	for _, c := range cases {
		rows, err := readRows(t, c.row)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rows[0].Options()
		if err != nil {
			t.Errorf("%s: %v", c.row, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.row, got, c.want)
		}
	}
}

func TestMeasuredOptionsRefuseWhatTheyCannotTake(t *testing.T) {
	for row, field := range map[string]string{
		`{"id":"x","batch":1,"seq":8,"precision":"fp8","mode":"train"}`:                         "field precision",
		`{"id":"x","batch":1,"seq":8,"precision":"fp32","optim":"lion","mode":"train"}`:         "field optim",
		`{"id":"x","batch":1,"seq":8,"precision":"fp32","mode":"serve"}`:                        "field mode",
		`{"id":"x","batch":1,"seq":8,"precision":"fp32","mode":"train","accum":1.5}`:            "field accum",
		`{"id":"x","batch":1,"seq":8,"precision":"fp32","mode":"train","checkpointing":"some"}`: "field checkpointing",
		`{"id":"x","batch":1,"seq":8,"precision":"fp32","mode":"train","attn_impl":"xformers"}`: "field attn_impl",
		`{"id":"x","batch":1,"seq":8,"precision":"fp32","mode":"train","ckpt":true}`:            "field ckpt: unknown",
	} {
		rows, err := readRows(t, row)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rows[0].Options(); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v, want one naming %q", row, err, field)
		}
	}
}
