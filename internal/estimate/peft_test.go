package estimate

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// llamaLike is a Llama-architecture model of the given shape (LLaMA-1/2
// 7B: hidden 4096, MLP 11008, 32 layers, 32 heads, vocab 32000).
func llamaLike(name string, h, inter, layers, heads, kv, vocab int) *models.Model {
	return &models.Model{Name: name, Family: models.Llama, Hidden: h, Intermediate: inter, Layers: layers,
		Heads: heads, KVHeads: kv, HeadDim: h / heads, Vocab: vocab, Activation: "silu", Gated: true}
}

// TestPEFTTrainableParams: the trainable and total counts equal what
// PEFT's print_trainable_parameters() printed for the same configuration
// (sources in the table), and the r·(in+out) formula.
func TestPEFTTrainableParams(t *testing.T) {
	llama7b := llamaLike("llama-2-7b", 4096, 11008, 32, 32, 32, 32000)
	chineseLlama := llamaLike("chinese-llama-7b", 4096, 11008, 32, 32, 32, 49954)
	llama3 := llamaLike("llama-3-8b", 4096, 14336, 32, 32, 8, 128256)
	gpt2, err := models.Preset("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		md             *models.Model
		r              int
		targets, save  string
		trainable, all int64
		source         string
	}{
		// "trainable params: 4,194,304 || all params: 6,742,609,920 ||
		// trainable%: 0.06220594176090199" (q_proj, v_proj, r=8): the
		// LoRA example printed for meta-llama/Llama-2-7b-hf in many public
		// tutorials; the same adapters on a 49,954-token LLaMA-7B printed
		// "trainable params: 4194304 || all params: 6889689088" in
		// https://github.com/ymcui/Chinese-LLaMA-Alpaca/issues/189
		{llama7b, 8, "q_proj,v_proj", "", 4_194_304, 6_742_609_920, "Llama-2-7b-hf tutorials"},
		{chineseLlama, 8, "q_proj,v_proj", "", 4_194_304, 6_889_689_088, "ymcui/Chinese-LLaMA-Alpaca#189"},
		// r=64 on all seven projections of LLaMA-7B: the per-module shapes
		// (q_proj.lora_A (64, 4096), gate_proj.lora_B (11008, 64),
		// down_proj.lora_A (64, 11008), ...) listed in
		// https://github.com/ChenDelong1999/polite-flamingo/issues/3
		// sum to 4,997,120 a layer; 159,907,840 || 6,898,323,456 is the
		// QLoRA-recipe print for Llama-2-7B.
		{llama7b, 64, "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj", "", 159_907_840, 6_898_323_456, "polite-flamingo#3"},
		{llama7b, 64, "all-linear", "", 159_907_840, 6_898_323_456, "all-linear = the seven projections"},
		// LLaMA-Factory's log for Meta-Llama-3-8B, lora_target all, rank 8:
		// "trainable params: 20,971,520 || all params: 8,051,232,768 ||
		// trainable%: 0.2605" (a training log in a public repository).
		{llama3, 8, "all-linear", "", 20_971_520, 8_051_232_768, "LLaMA-Factory log"},
		// GPT-2 with PEFT's default target (c_attn, 768→2304) at r=8:
		// 12 × 8 × (768 + 2304).
		{gpt2, 8, "", "", 294_912, 124_439_808 + 294_912, "formula"},
		// modules_to_save=["lm_head"] adds a trainable copy of the head.
		{llama7b, 8, "q_proj,v_proj", "lm_head", 4_194_304 + 131_072_000, 6_742_609_920 + 131_072_000, "formula"},
	} {
		o := Options{Seq: 512, Precision: "bf16", PEFT: PEFTOptions{Method: "lora", R: c.r, Targets: c.targets, ModulesToSave: c.save}}
		tr, all, err := PEFTParams(c.md, o)
		if err != nil {
			t.Fatalf("%s r=%d %s: %v", c.md.Name, c.r, c.targets, err)
		}
		if tr != c.trainable || all != c.all {
			t.Errorf("%s r=%d %s (%s): trainable %d all %d, PEFT printed %d and %d", c.md.Name, c.r, c.targets, c.source, tr, all, c.trainable, c.all)
		}
		r, err := Estimate(c.md, o)
		if err != nil {
			t.Fatal(err)
		}
		if r.TrainableParams != c.trainable {
			t.Errorf("%s: Result.TrainableParams %d, want %d", c.md.Name, r.TrainableParams, c.trainable)
		}
	}
}

// TestQuantLayouts: the bytes each format stores for a 4096×4096 weight.
func TestQuantLayouts(t *testing.T) {
	const in, out = 4096, 4096
	n := int64(in * out)
	for _, c := range []struct {
		q    QuantOptions
		want int64
	}{
		{QuantOptions{Method: "int8"}, n + out*4},
		{QuantOptions{Method: "nf4"}, n/2 + n/64*4},                              // 0.5 bit/param of fp32 absmax
		{QuantOptions{Method: "nf4", Double: true}, n/2 + n/64 + n/64/256*4 + 4}, // ~0.127 bit/param
		{QuantOptions{Method: "gptq"}, n/2 + in/128*out/8*4 + in/128*out*2 + in*4},
		{QuantOptions{Method: "awq", GroupSize: 64}, n/2 + in/64*out/8*4 + in/64*out*2},
		{QuantOptions{Method: "fp8"}, n + out*4},
		{QuantOptions{Method: "fp8", GroupSize: 128}, n + (in/128)*(out/128)*4},
	} {
		var got int64
		for _, p := range c.q.quantParts(in, out) {
			got += p.elems * p.dt
		}
		if got != c.want {
			t.Errorf("%+v: %d bytes, want %d", c.q, got, c.want)
		}
	}
}

// TestPEFTFlagErrors: bad combinations are one-line errors naming the flag.
func TestPEFTFlagErrors(t *testing.T) {
	md := llamaLike("llama-2-7b", 4096, 11008, 32, 32, 32, 32000)
	for _, c := range []struct {
		o    Options
		flag string
	}{
		{Options{Seq: 64, Quant: QuantOptions{Method: "nf4"}}, "--quant"},
		{Options{Seq: 64, PEFT: PEFTOptions{Method: "lora"}, Quant: QuantOptions{Method: "nf4"}}, "--quant"},
		{Options{Seq: 64, PEFT: PEFTOptions{Method: "qlora"}, Quant: QuantOptions{Method: "gptq"}}, "--quant"},
		{Options{Seq: 64, PEFT: PEFTOptions{Method: "dora"}}, "--peft"},
		{Options{Seq: 64, PEFT: PEFTOptions{R: 8}}, "--lora-r"},
		{Options{Seq: 64, PEFT: PEFTOptions{Method: "lora", Targets: "query"}}, "--lora-targets"},
		{Options{Seq: 64, PEFT: PEFTOptions{Method: "lora", ModulesToSave: "score"}}, "--modules-to-save"},
		{Options{Seq: 64, PEFT: PEFTOptions{Method: "lora", Dropout: 1}}, "--lora-dropout"},
		{Options{Seq: 64, Inference: true, Quant: QuantOptions{Method: "nf4", Double: true, GroupSize: 64}}, "--quant-group-size"},
		{Options{Seq: 64, Inference: true, Quant: QuantOptions{Method: "gptq", Double: true}}, "--quant-double"},
		{Options{Seq: 64, Inference: true, Quant: QuantOptions{KVDType: "fp8"}}, "--kv-dtype"},
		{Options{Seq: 64, Optimizer: "paged-adamw-8bit"}, "--optimizer"},
		{Options{Seq: 64, Inference: true, PEFT: PEFTOptions{Method: "lora"}}, "--peft"},
	} {
		_, err := Estimate(md, c.o)
		if err == nil || !strings.Contains(err.Error(), c.flag) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v, want one line naming %s", c.o, err, c.flag)
		}
	}
}

// TestPEFTQuantModes walks small models through every PEFT and
// quantization mode: no error, ordered figures, no negative breakdown row,
// and the directions the formats promise.
func TestPEFTQuantModes(t *testing.T) {
	train := []Options{
		{Seq: 128, Batch: 2, Precision: "bf16", PEFT: PEFTOptions{Method: "lora"}},
		{Seq: 128, Batch: 2, Precision: "amp-bf16", Checkpointing: true, PEFT: PEFTOptions{Method: "lora", R: 16, Dropout: 0.05, Targets: "all-linear", NonReentrant: true}},
		{Seq: 128, Batch: 2, Precision: "amp-bf16", PEFT: PEFTOptions{Method: "lora", ModulesToSave: "lm_head"}},
		{Seq: 128, Batch: 2, Precision: "amp-bf16", Checkpointing: true, PEFT: PEFTOptions{Method: "qlora", Targets: "all-linear"}, Quant: QuantOptions{Double: true}},
		{Seq: 128, Batch: 2, Precision: "amp-fp16", Checkpointing: true, Optimizer: "paged-adamw-8bit", PEFT: PEFTOptions{Method: "qlora"}, Quant: QuantOptions{Method: "fp4"}},
		{Seq: 128, Batch: 2, Precision: "fp16", PEFT: PEFTOptions{Method: "qlora", NoKbitPrep: true}, Quant: QuantOptions{Method: "int8"}},
		{Seq: 128, Batch: 2, Precision: "bf16", DDP: true, WorldSize: 2, PEFT: PEFTOptions{Method: "lora"}},
	}
	infer := []Options{
		{Seq: 128, Inference: true, Precision: "fp16", Quant: QuantOptions{Method: "int8"}},
		{Seq: 128, Inference: true, Precision: "bf16", Quant: QuantOptions{Method: "nf4", Double: true}},
		{Seq: 128, Inference: true, GenLen: 16, Precision: "fp16", Quant: QuantOptions{Method: "gptq", GroupSize: -1}},
		{Seq: 128, Inference: true, GenLen: 16, Precision: "fp16", Quant: QuantOptions{Method: "awq", KVDType: "fp8"}},
		{Seq: 128, Inference: true, KVCache: true, Precision: "bf16", Quant: QuantOptions{Method: "fp8", GroupSize: 128}},
	}
	for _, name := range []string{"gpt2", "bert-base-uncased", "meta-llama/Llama-3.2-1B"} {
		md, err := models.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range append(append([]Options{}, train...), infer...) {
			if md.Family == models.BERT && o.GenLen+btoi(o.KVCache) > 0 {
				continue // an encoder does not generate
			}
			r, err := Estimate(md, o)
			if err != nil {
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
			if !o.Inference && (r.TrainableParams <= 0 || r.TrainableParams >= r.Params) {
				t.Errorf("%s %+v: %d trainable of %d", name, o, r.TrainableParams, r.Params)
			}
		}
	}
	// A 4-bit base takes less than a bf16 one; an fp8 KV cache half a bf16 one.
	md, _ := models.Preset("meta-llama/Llama-3.1-8B")
	lora, _ := Estimate(md, Options{Seq: 512, Precision: "amp-bf16", Checkpointing: true, PEFT: PEFTOptions{Method: "lora"}})
	qlora, _ := Estimate(md, Options{Seq: 512, Precision: "amp-bf16", Checkpointing: true, PEFT: PEFTOptions{Method: "qlora"}})
	if qlora.PeakAllocatedBytes >= lora.PeakAllocatedBytes*3/4 {
		t.Errorf("QLoRA %d not well under LoRA %d", qlora.PeakAllocatedBytes, lora.PeakAllocatedBytes)
	}
	kv := func(dt string) int64 {
		r, err := Estimate(md, Options{Seq: 4096, Batch: 4, Inference: true, KVCache: true, Precision: "bf16", Quant: QuantOptions{KVDType: dt}})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range r.Breakdown {
			if it.Name == "kv_cache" {
				return it.Bytes
			}
		}
		return 0
	}
	if b, f := kv("bf16"), kv("fp8"); f == 0 || b != 2*f {
		t.Errorf("KV cache bf16 %d, fp8 %d: want twice", b, f)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLoRABaseFP32: a base loaded in fp32 and trained with LoRA under
// autocast (from_pretrained without torch_dtype, Trainer bf16=True) holds
// its weights in fp32, and autocast casts each frozen weight for each call
// (it caches only weights that require grad): with checkpointing the half
// copies at the peak are those one recomputed block keeps, not the whole
// model's. The traced HF Trainer + PEFT run of this shape agreed within
// 0.7 % (bench/results/trace-real-scripts.md).
func TestLoRABaseFP32(t *testing.T) {
	md := llamaLike("llama-2048", 2048, 5632, 8, 32, 4, 32000)
	o := Options{Batch: 4, Seq: 1024, Precision: "amp-bf16", Checkpointing: true,
		PEFT: PEFTOptions{Method: "lora", R: 8, Targets: "q_proj,v_proj", BaseFP32: true}}
	r, err := Estimate(md, o)
	if err != nil {
		t.Fatal(err)
	}
	half, err := Estimate(md, Options{Batch: 4, Seq: 1024, Precision: "amp-bf16", Checkpointing: true,
		PEFT: PEFTOptions{Method: "lora", R: 8, Targets: "q_proj,v_proj"}})
	if err != nil {
		t.Fatal(err)
	}
	n := md.ParamCount()
	if w := itemBytes(r, "weights"); w < 4*n-n/100 || w > 4*n+n/100 {
		t.Errorf("weights %d bytes, want about 4 x %d (fp32)", w, n)
	}
	perBlock := 2 * (n - 2*32000*2048) / 8 // one block's weights in bf16
	if c := itemBytes(r, "autocast_weight_copies"); c > perBlock {
		t.Errorf("autocast copies %d bytes at the peak, want at most one block's (%d): frozen weights are not cached", c, perBlock)
	}
	if r.PeakAllocatedBytes <= half.PeakAllocatedBytes {
		t.Errorf("fp32 base %d bytes, bf16 base %d: want more", r.PeakAllocatedBytes, half.PeakAllocatedBytes)
	}
	if _, err := Estimate(md, Options{Batch: 1, Seq: 128, Precision: "bf16",
		PEFT: PEFTOptions{Method: "lora", BaseFP32: true}}); err == nil || !strings.Contains(err.Error(), "--lora-base-fp32") {
		t.Errorf("--lora-base-fp32 with --precision bf16: err %v, want one naming the flag", err)
	}
}

// TestPagedOptimizerThreshold: bitsandbytes' paged optimizers page only
// the states of tensors of 1e5 elements or more (get_state_buffer); the
// others are torch.zeros_like in the caching allocator. Llama-2-7B, LoRA
// on all seven projections: at rank 16 only gate/up's B (11008 × 16) and
// down's A (16 × 11008), 176,128 elements each, are paged, 3 a layer; at
// rank 64 every adapter is (the smallest, 64 × 4096, has 262,144). The
// trace of the same jobs (bench/results/trace-real-scripts.md, "QLoRA")
// gets the same bytes from bitsandbytes' own code.
func TestPagedOptimizerThreshold(t *testing.T) {
	md := llamaLike("llama-2-7b", 4096, 11008, 32, 32, 32, 32000)
	for _, c := range []struct {
		r         int
		optimizer string
		paged     int64
	}{
		{16, "paged-adamw-8bit", 32 * 3 * 176_128 * 2 * 1},
		{16, "paged-adamw", 32 * 3 * 176_128 * 2 * 4},
		{64, "paged-adamw-8bit", 159_907_840 * 2 * 1},
		{8, "paged-adamw", 0}, // 11008 × 8 = 88,064: none
	} {
		o := Options{Seq: 1024, Batch: 4, Precision: "amp-bf16", Checkpointing: true, Optimizer: c.optimizer,
			PEFT: PEFTOptions{Method: "qlora", R: c.r, Targets: "all-linear"}, Quant: QuantOptions{Double: true}}
		r, err := Estimate(md, o)
		if err != nil {
			t.Fatal(err)
		}
		var got int64
		for _, it := range r.Breakdown {
			if it.Name == "paged_optimizer_states" {
				got = it.Bytes
			}
		}
		if got != c.paged {
			t.Errorf("r %d %s: paged %d bytes, want %d", c.r, c.optimizer, got, c.paged)
		}
	}
}
