package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/i18n"
)

// addPEFTFlags registers estimate's LoRA/QLoRA and quantization flags;
// they fill o.PEFT and o.Quant (the estimate package checks them).
func addPEFTFlags(fl *pflag.FlagSet, o *estimate.Options) {
	p, q := &o.PEFT, &o.Quant
	fl.StringVar(&p.Method, "peft", "", "train LoRA adapters on a frozen base: lora (half-precision base) or qlora (bitsandbytes 4-bit base, prepare_model_for_kbit_training)")
	fl.IntVar(&p.R, "lora-r", 0, "LoRA rank r (default 8, PEFT's)")
	fl.IntVar(&p.Alpha, "lora-alpha", 0, "LoRA alpha (default 8, PEFT's; scaling only, no memory)")
	fl.StringVar(&p.Targets, "lora-targets", "", "target_modules as PEFT matches them, comma-separated (q_proj,v_proj), or all-linear (default: PEFT's for the architecture)")
	fl.Float64Var(&p.Dropout, "lora-dropout", 0, "lora_dropout: above 0 each adapter keeps a dropout mask of its input")
	fl.StringVar(&p.ModulesToSave, "modules-to-save", "", "modules trained in full next to the adapters, comma-separated (lm_head,embed_tokens)")
	fl.Var(&invertedBool{p: &p.NonReentrant}, "use-reentrant", "with --checkpointing and --peft: use_reentrant (true: PEFT's default, the embeddings' output requires grad; false: it does not)")
	fl.Lookup("use-reentrant").NoOptDefVal = "true"
	fl.Var(&invertedBool{p: &p.NoKbitPrep}, "kbit-prep", "with --peft qlora: prepare_model_for_kbit_training upcasts embeddings, norms and lm_head to fp32 and turns checkpointing on")
	fl.Lookup("kbit-prep").NoOptDefVal = "true"
	fl.BoolVar(&p.BaseFP32, "lora-base-fp32", false, "with --peft lora and --precision amp-bf16/amp-fp16: the frozen base was loaded in fp32 (from_pretrained without torch_dtype) and runs under autocast")
	fl.BoolVar(&p.TRLBF16Cast, "trl-bf16-cast", false, "with --peft qlora and --precision amp-bf16: TRL's SFTTrainer (bf16=True, peft_config) casts the fp32 embeddings and lm_head back to bf16 after prepare_model_for_kbit_training")
	fl.StringVar(&q.Method, "quant", "", "quantized weights: int8 (LLM.int8), nf4, fp4 (bitsandbytes), gptq, awq (packed 4-bit), fp8; training needs --peft qlora")
	fl.BoolVar(&q.Double, "quant-double", false, "bitsandbytes 4-bit double quantization (bnb_4bit_use_double_quant)")
	fl.IntVar(&q.GroupSize, "quant-group-size", 0, "GPTQ/AWQ group size (default 128; -1: one group per column for GPTQ), fp8 block size")
	fl.StringVar(&q.ComputeDType, "quant-compute-dtype", "", "bnb_4bit_compute_dtype: bf16, fp16 or fp32 (default bf16, fp16 with an fp16 precision)")
	fl.BoolVar(&q.SavesInput, "bnb-saves-input", false, "bitsandbytes before 0.43.2: each 4-bit layer keeps its compute-dtype input until its autograd node goes (MatMul4Bit ctx.tensors = (A, B))")
	fl.StringVar(&q.KVDType, "kv-dtype", "", "KV cache element type with --kv-cache/--gen-len: bf16, fp16, fp32 or fp8 (default: the model's)")
}

// invertedBool is a boolean flag stored as its negation, so that the
// Options field's zero value is PEFT's default.
type invertedBool struct{ p *bool }

func (b *invertedBool) String() string {
	if b.p == nil {
		return "true"
	}
	return strconv.FormatBool(!*b.p)
}

func (b *invertedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	*b.p = !v
	return nil
}

func (b *invertedBool) Type() string { return "bool" }

// estimatePEFTFlags applies what depends on which flags were given:
// prepare_model_for_kbit_training turns gradient checkpointing on, so
// --peft qlora checkpoints unless --checkpointing none or --kbit-prep=false
// says otherwise.
func estimatePEFTFlags(cmd *cobra.Command, f *estimateFlags) {
	fl := cmd.Flags()
	p := f.opts.PEFT
	if p.Method == "qlora" && !p.NoKbitPrep && !fl.Changed("checkpointing") {
		f.opts.Checkpointing = true
	}
}

// peftSetup describes the adapters, the quantized weights and the KV
// cache's dtype for the setup line.
func peftSetup(t tr, o estimate.Options) []string {
	var parts []string
	p, q := o.PEFT, o.Quant
	if p.Method != "" {
		targets := p.Targets
		if targets == "" {
			targets = "default"
		}
		id := "estimate.setup.lora"
		if p.Method == "qlora" {
			id = "estimate.setup.qlora"
		}
		// The targets are a part of their own: a list of seven names is
		// most of a line.
		parts = append(parts, t(id, itoa(p.R), itoa(p.Alpha)), t("estimate.setup.targets", targets))
		if p.Dropout > 0 {
			parts = append(parts, t("estimate.setup.loraDropout", strconv.FormatFloat(p.Dropout, 'g', -1, 64)))
		}
		if p.ModulesToSave != "" {
			parts = append(parts, t("estimate.setup.saved", p.ModulesToSave))
		}
		if p.Method == "qlora" && p.NoKbitPrep {
			parts = append(parts, t("estimate.setup.noKbitPrep"))
		}
	}
	if q.Method != "" {
		parts = append(parts, t("estimate.setup.quant", quantName(q)))
	}
	if q.SavesInput {
		parts = append(parts, t("estimate.setup.bnbSavesInput"))
	}
	if q.KVDType != "" {
		parts = append(parts, t("estimate.setup.kvDType", q.KVDType))
	}
	return parts
}

// quantName is the quantization in the words of its libraries' configs.
func quantName(q estimate.QuantOptions) string {
	s := q.Method
	if q.Double {
		s += "+double-quant"
	}
	if q.ComputeDType != "" {
		s += " (compute " + q.ComputeDType + ")"
	}
	switch {
	case q.GroupSize == -1:
		s += " per-column"
	case q.GroupSize > 0:
		s += " g" + strconv.Itoa(q.GroupSize)
	case q.Method == "gptq" || q.Method == "awq":
		s += " g128"
	}
	return s
}

// peftRows: the trainable-parameter count as PEFT prints it.
func peftRows(t tr, r *estimate.Result) [][2]string {
	if r.Opts.PEFT.Method == "" || r.TrainableParams == 0 {
		return nil
	}
	all := r.Params + r.TrainableParams
	pct := strconv.FormatFloat(100*float64(r.TrainableParams)/float64(all), 'f', 4, 64)
	return [][2]string{{t("estimate.row.trainable"), groupDigits(r.TrainableParams) + "\t" + t("estimate.note.trainable", pct, groupDigits(all))}}
}

// groupDigits writes n with thousands separators, as PEFT prints counts.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// setupWidth is where the setup line (indented by two) breaks: adapters
// and quantization make it longer than the 80 columns the text keeps to.
const setupWidth = 78

// wrapSetup joins the setup's parts with the language's separator,
// starting a new indented line before a part that would pass setupWidth
// display columns.
func wrapSetup(t tr, parts []string) string {
	sep := t("estimate.sep")            // ", " or "，"
	mark := strings.TrimRight(sep, " ") // what ends a part: "," or "，"
	gap := sep[len(mark):]
	var b strings.Builder
	col := 0
	for i, p := range parts {
		if i > 0 {
			b.WriteString(mark)
			col += i18n.Width(mark)
			if col+len(gap)+i18n.Width(p) <= setupWidth {
				b.WriteString(gap)
				col += len(gap)
			} else {
				b.WriteString("\n  ")
				col = 0
			}
		}
		b.WriteString(p)
		col += i18n.Width(p)
	}
	return b.String()
}
