package estimate

import (
	"fmt"
	"sort"
	"strings"
)

// rowKeys are the fields a measured row may carry: what the capture
// recorded about the run and its result (read by ReadCalibration or kept
// for people), and every name Options reads a knob under. A key outside
// the list is an error naming it: a misspelt knob ("ckpt" for
// checkpointing) would otherwise be skipped and the row estimated without
// it, which once inflated three rows by 80-170%. A new knob is added here
// with the code that reads it.
var rowKeys = map[string]bool{
	// The capture and its measurements.
	"id": true, "model": true, "params": true, "model_state_bytes": true, "peak_allocated": true,
	"peak_reserved": true, "nvml_process_used": true, "model_config": true, "steps": true,
	"torch": true, "wall": true, "num_alloc_retries": true, "dry_run": true,
	"gpu": true, "note": true, "source": true,
	// The settings Options reads.
	"batch": true, "seq": true, "precision": true, "optim": true, "mode": true,
	"accum": true, "grad_accum": true, "gradient_accumulation_steps": true,
	"gen_len": true, "max_new_tokens": true, "new_tokens": true,
	"image_size": true, "zero": true, "zero_stage": true, "world_size": true,
	"fsdp": true, "load_fp32": true, "ddp": true, "ddp_bucket_view": true, "gradient_as_bucket_view": true,
	"checkpointing": true, "gradient_checkpointing": true, "activation_checkpointing": true,
	"kv_cache": true, "use_cache": true,
	"attn_impl": true, "attn_implementation": true, "attention": true,
	"optim_impl": true, "optimizer_impl": true, "fused": true, "foreach": true,
	"tp": true, "tensor_parallel": true, "sequence_parallel": true,
	"transformers": true, // the library version the run used (its causal-LM loss: lmloss.go)
}

// checkRowKeys refuses a row with a field no reader knows.
func checkRowKeys(raw map[string]any) error {
	var unknown []string
	for k := range raw {
		if !rowKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("field %s: unknown (a setting the estimate would ignore; see Measured.Options for the names it reads)",
		strings.Join(unknown, ", "))
}
