package estimate

import (
	"fmt"
	"strings"
)

// Options turns a measured row's settings into estimator options. Besides
// batch, seq, precision, optim and mode, a row may name the other knobs a
// harness varies, under the names harnesses and the Hugging Face Trainer
// use: accum (grad_accum, gradient_accumulation_steps), checkpointing
// (gradient_checkpointing), gen_len (max_new_tokens, new_tokens), kv_cache
// (use_cache), attn_impl, image_size, optim_impl (fused), zero (zero_stage),
// world_size, tp (tensor_parallel), sequence_parallel, fsdp, ddp,
// ddp_bucket_view (gradient_as_bucket_view),
// load_fp32 and gpu. A value the estimator cannot take is
// an error naming the field, never a silent default.
func (m Measured) Options() (Options, error) {
	o := Options{Batch: m.Batch, Seq: m.Seq}
	if err := checkRowKeys(m.raw); err != nil {
		return o, err
	}
	var err error
	if o.Precision, err = measuredPrecision(m.Precision); err != nil {
		return o, err
	}
	switch strings.ToLower(m.Mode) {
	case "", "train", "training":
	case "infer", "inference", "eval":
		o.Inference = true
	case "generate", "generation":
		o.Inference, o.KVCache = true, true
	default:
		return o, fmt.Errorf("field mode: %q (want train, infer or generate)", m.Mode)
	}
	if m.Optim != nil && !o.Inference {
		if o.Optimizer, o.OptimizerImpl, err = measuredOptimizer(*m.Optim); err != nil {
			return o, err
		}
	}
	r := rowFields{m.raw}
	ints := []struct {
		dst   *int
		names []string
	}{
		{&o.Accum, []string{"accum", "grad_accum", "gradient_accumulation_steps"}},
		{&o.GenLen, []string{"gen_len", "max_new_tokens", "new_tokens"}},
		{&o.ImageSize, []string{"image_size"}},
		{&o.ZeroStage, []string{"zero", "zero_stage"}},
		{&o.ZeroBucket, []string{"zero_bucket", "reduce_bucket_size"}},
		{&o.WorldSize, []string{"world_size"}},
		{&o.TP, []string{"tp", "tensor_parallel"}},
	}
	for _, f := range ints {
		if err := r.int(f.dst, f.names...); err != nil {
			return o, err
		}
	}
	var fsdp, loadFP32, ddp, bucketView, sp, overlap *bool
	bools := []struct {
		dst   **bool
		names []string
	}{
		{&fsdp, []string{"fsdp"}},
		{&loadFP32, []string{"load_fp32"}},
		{&ddp, []string{"ddp"}},
		{&bucketView, []string{"ddp_bucket_view", "gradient_as_bucket_view"}},
		{&sp, []string{"sequence_parallel"}},
		{&overlap, []string{"zero_overlap_comm", "overlap_comm"}},
	}
	for _, f := range bools {
		if err := r.bool(f.dst, f.names...); err != nil {
			return o, err
		}
	}
	if fsdp != nil && *fsdp {
		o.FSDP, o.ZeroStage = true, 3
	}
	if loadFP32 != nil {
		o.NoLoadFP32 = !*loadFP32
	}
	o.SequenceParallel = sp != nil && *sp
	o.ZeroOverlapComm = overlap != nil && *overlap
	o.DDP = ddp != nil && *ddp
	o.DDPBucketView = o.DDP && bucketView != nil && *bucketView
	if err := r.checkpointing(&o); err != nil {
		return o, err
	}
	if err := r.kvCache(&o); err != nil {
		return o, err
	}
	if err := r.attention(&o); err != nil {
		return o, err
	}
	if err := r.optimizerImpl(&o); err != nil {
		return o, err
	}
	if v, ok := r.raw["transformers"]; ok {
		s, isString := v.(string)
		if _, _, err := parseVersion(s); !isString || err != nil {
			return o, fmt.Errorf("field transformers: %v (want a version such as 4.48.1)", v)
		}
		o.Transformers = s
	}
	if name, ok := r.raw["gpu"].(string); ok {
		if g, err := LookupGPU(name); err == nil {
			o.ComputeCapability = g.ComputeCapability
		}
	}
	return o, nil
}

func measuredPrecision(p string) (string, error) {
	s := strings.ToLower(strings.ReplaceAll(p, "_", "-"))
	switch s {
	case "fp32", "float32", "":
		return "fp32", nil
	case "amp-bf16", "bf16-amp", "autocast-bf16", "bf16-mixed":
		return "amp-bf16", nil
	case "amp-fp16", "fp16-amp", "autocast-fp16", "16-mixed", "fp16-mixed",
		"amp-fp16-scaler", "fp16-scaler", "amp-fp16+scaler", "fp16+scaler":
		return "amp-fp16", nil // a GradScaler adds nothing the estimator counts
	case "bf16", "bfloat16", "bf16-true", "pure-bf16":
		return "bf16", nil
	case "fp16", "float16", "half", "fp16-true", "pure-fp16":
		return "fp16", nil
	}
	return "", fmt.Errorf("field precision: %q (want fp32, amp-bf16, amp-fp16, bf16 or fp16)", p)
}

func measuredOptimizer(name string) (opt, impl string, err error) {
	s := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
	if rest, ok := strings.CutSuffix(s, "-fused"); ok {
		s, impl = rest, "fused"
	}
	if rest, ok := strings.CutSuffix(s, "-foreach"); ok {
		s, impl = rest, "foreach"
	}
	switch s {
	case "", "adamw", "adamw-torch":
		return "adamw", impl, nil
	case "adam":
		return "adam", impl, nil
	case "sgd":
		return "sgd", impl, nil
	case "sgd-momentum", "sgdm", "momentum":
		return "sgd-momentum", impl, nil
	case "adafactor":
		return "adafactor", impl, nil
	case "adamw-8bit", "adamw8bit", "adamw-bnb-8bit", "bnb-adamw-8bit", "paged-adamw-8bit":
		return "adamw-8bit", impl, nil
	}
	return "", "", fmt.Errorf("field optim: %q (want adamw, adam, sgd, sgd-momentum, adafactor or adamw-8bit, optionally -fused)", name)
}

// rowFields reads optional knobs from a measured row under any of their names.
type rowFields struct{ raw map[string]any }

func (r rowFields) find(names ...string) (string, any, bool) {
	for _, n := range names {
		if v, ok := r.raw[n]; ok && v != nil {
			return n, v, true
		}
	}
	return "", nil, false
}

func (r rowFields) int(dst *int, names ...string) error {
	n, v, ok := r.find(names...)
	if !ok {
		return nil
	}
	f, isNum := v.(float64)
	if !isNum || f != float64(int(f)) || f < 0 {
		return fmt.Errorf("field %s: %v is not a count", n, v)
	}
	*dst = int(f)
	return nil
}

func (r rowFields) bool(dst **bool, names ...string) error {
	n, v, ok := r.find(names...)
	if !ok {
		return nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return fmt.Errorf("field %s: %v is not true or false", n, v)
	}
	*dst = &b
	return nil
}

func (r rowFields) checkpointing(o *Options) error {
	n, v, ok := r.find("checkpointing", "gradient_checkpointing", "activation_checkpointing")
	if !ok {
		return nil
	}
	switch x := v.(type) {
	case bool:
		o.Checkpointing = x
		return nil
	case string:
		switch strings.ToLower(x) {
		case "full", "true", "reentrant", "non-reentrant", "non_reentrant":
			o.Checkpointing = true
			return nil
		case "none", "false", "":
			return nil
		}
	}
	return fmt.Errorf("field %s: %v (want true, false, full or none)", n, v)
}

func (r rowFields) kvCache(o *Options) error {
	var kv *bool
	if err := r.bool(&kv, "kv_cache", "use_cache"); err != nil {
		return err
	}
	if kv != nil && o.Inference {
		o.KVCache = *kv
	}
	if o.GenLen > 0 {
		o.KVCache = true
	}
	return nil
}

func (r rowFields) attention(o *Options) error {
	n, v, ok := r.find("attn_impl", "attn_implementation", "attention")
	if !ok {
		return nil
	}
	s, _ := v.(string)
	switch strings.ToLower(s) {
	case "sdpa", "":
		o.Attention = "sdpa"
	case "eager", "math":
		o.Attention = "eager"
	case "flash", "flash_attention_2", "flash_attention_3", "flash-attention-2":
		o.Attention = "flash"
	default:
		return fmt.Errorf("field %s: %v (want sdpa, eager or flash_attention_2)", n, v)
	}
	return nil
}

func (r rowFields) optimizerImpl(o *Options) error {
	n, v, ok := r.find("optim_impl", "optimizer_impl", "fused", "foreach")
	if !ok || o.Inference {
		return nil
	}
	switch x := v.(type) {
	case bool:
		if x && n == "fused" {
			o.OptimizerImpl = "fused"
		} else if x && n == "foreach" {
			o.OptimizerImpl = "foreach"
		}
		return nil
	case string:
		if s := strings.ToLower(x); s == "fused" || s == "foreach" {
			o.OptimizerImpl = s
			return nil
		}
	}
	return fmt.Errorf("field %s: %v (want fused or foreach)", n, v)
}
