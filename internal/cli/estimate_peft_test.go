package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/i18n"
	"golang.org/x/text/language"
)

// TestEstimateCatalogComplete: every English message of estimate has a
// Chinese one with the same arguments.
func TestEstimateCatalogComplete(t *testing.T) {
	if m := estimateCatalog.Missing(); len(m) > 0 {
		t.Fatalf("estimate catalog:\n%s", strings.Join(m, "\n"))
	}
}

// TestEstimatePEFTCLI: LoRA/QLoRA flags reach the estimate, the human
// output shows the trainable count as PEFT prints it, JSON carries it.
func TestEstimatePEFTCLI(t *testing.T) {
	out, errs, code := runCLI(t, "estimate", "--model", "meta-llama/Llama-3.1-8B", "--seq", "1024", "--precision", "amp-bf16",
		"--peft", "qlora", "--lora-r", "8", "--lora-targets", "all-linear", "--quant-double", "--gpu", "L4")
	if code != 0 {
		t.Fatalf("code %d, stderr %s\n%s", code, errs, out)
	}
	// Llama-3-8B, rank 8 on all linears: LLaMA-Factory printed
	// "trainable params: 20,971,520 || all params: 8,051,232,768".
	for _, want := range []string{"trainable parameters  20,971,520", "of 8,051,232,768", "QLoRA r=8", "nf4+double-quant",
		"checkpointing", "adapter weights", "quantization constants"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = runCLI(t, "estimate", "--model", "gpt2", "--seq", "256", "--peft", "lora", "--json")
	var v struct {
		Trainable int64 `json:"trainable_params"`
		Options   struct {
			Checkpointing bool `json:"checkpointing"`
			PEFT          struct {
				Targets string `json:"targets"`
			} `json:"peft"`
		} `json:"options"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("code %d, %v\n%s", code, err, out)
	}
	if v.Trainable != 294_912 || v.Options.PEFT.Targets != "c_attn" || v.Options.Checkpointing {
		t.Errorf("gpt2 LoRA: %+v", v)
	}
	// qlora turns checkpointing on (prepare_model_for_kbit_training) unless
	// --checkpointing says otherwise.
	out, _, _ = runCLI(t, "estimate", "--model", "gpt2", "--seq", "256", "--peft", "qlora", "--checkpointing=none", "--json")
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Options.Checkpointing {
		t.Errorf("--checkpointing=none with qlora: %v %+v", err, v)
	}
}

// TestEstimatePEFTFlagErrors: a bad combination is one line naming the flag.
func TestEstimatePEFTFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--quant", "nf4"}, "--quant"},
		{[]string{"--peft", "lora", "--quant", "nf4"}, "--quant"},
		{[]string{"--peft", "lora", "--lora-targets", "query"}, "--lora-targets"},
		{[]string{"--peft", "lora", "--use-reentrant=false"}, "--use-reentrant"},
		{[]string{"--lora-r", "16"}, "--lora-r"},
		{[]string{"--peft", "qlora", "--kbit-prep=maybe"}, "--kbit-prep"},
		{[]string{"--inference", "--quant", "gptq", "--quant-double"}, "--quant-double"},
		{[]string{"--inference", "--kv-dtype", "fp8"}, "--kv-dtype"},
		{[]string{"--peft", "lora", "--optimizer", "adafactor"}, "--optimizer"},
	} {
		args := append([]string{"estimate", "--model", "gpt2", "--seq", "128"}, c.args...)
		_, errs, code := runCLI(t, args...)
		line := strings.TrimSpace(errs)
		if code == 0 || !strings.Contains(line, c.flag) || strings.Contains(line, "\n") {
			t.Errorf("%v: code %d, stderr %q: want one line naming %s", c.args, code, errs, c.flag)
		}
	}
}

// TestEstimateChinese: --lang zh renders labels, the fit and the levers
// in Chinese, aligned by display width; the JSON does not change.
func TestEstimateChinese(t *testing.T) {
	args := []string{"estimate", "--model", "gpt2-large", "--batch", "32", "--seq", "1024", "--peft", "lora", "--gpu", "T4"}
	zh, _, code := runCLI(t, append(args, "--lang", "zh")...)
	if code != 2 {
		t.Fatalf("code %d\n%s", code, zh)
	}
	for _, want := range []string{"峰值已分配", "可训练参数", "峰值时的构成", "放不下", "可节省显存的手段", "能放下的最大批大小", "适配器权重"} {
		if !strings.Contains(zh, want) {
			t.Errorf("zh output lacks %q:\n%s", want, zh)
		}
	}
	if strings.Contains(zh, "largest batch") || strings.Contains(zh, "breakdown at the peak") {
		t.Errorf("English left in the zh output:\n%s", zh)
	}
	// The sizes of the first table start in one display column.
	size := regexp.MustCompile(`\d+(\.\d+)? (B|KiB|MiB|GiB)`)
	col := -1
	rows := 0
	for _, l := range strings.Split(zh, "\n") {
		if !strings.HasPrefix(l, "峰值已") && !strings.HasPrefix(l, "进程") && !strings.HasPrefix(l, "可训练参数") {
			continue
		}
		rows++
		loc := size.FindStringIndex(l)
		if strings.HasPrefix(l, "可训练参数") {
			loc = regexp.MustCompile(`\d{1,3}(,\d{3})+`).FindStringIndex(l)
		}
		if loc == nil {
			t.Fatalf("no figure in %q", l)
		}
		c := i18n.Width(l[:loc[0]])
		if col >= 0 && c != col {
			t.Errorf("sizes not aligned (column %d, then %d):\n%s", col, c, zh)
		}
		col = c
	}
	if rows != 4 {
		t.Errorf("%d of the 4 figure rows found:\n%s", rows, zh)
	}
	j1, _, _ := runCLI(t, append(args, "--json")...)
	j2, _, _ := runCLI(t, append(args, "--json", "--lang", "zh")...)
	if j1 != j2 {
		t.Error("--lang zh changed the JSON")
	}
}

// TestPhaseLabel: English phases read as the estimate package wrote them,
// Chinese ones are fully translated, an unknown phase passes through.
func TestPhaseLabel(t *testing.T) {
	en, zh := estimateCatalog.T(i18n.EN), estimateCatalog.T(i18n.ZH)
	for _, p := range []string{"forward, step 1", "forward, step 2, block 3 of 32", "backward, step 2, block 16 of 16",
		"end of forward (head and loss), step 2", "start of backward (loss gradients), step 2", "optimizer step 1 (states created)",
		"optimizer step 2", "zero_grad, step 3", "forward, pass 1, block 12 of 12", "logits, pass 2", "generation, pass 1", "model load"} {
		if got := phaseLabel(en, p); got != p {
			t.Errorf("en %q -> %q", p, got)
		}
		if got := phaseLabel(zh, p); regexp.MustCompile(`[a-z]{4,}`).MatchString(strings.NewReplacer("zero_grad", "", "logits", "").Replace(got)) {
			t.Errorf("zh %q -> %q: English left", p, got)
		}
	}
	if got := phaseLabel(zh, "expert permutation, step 2"); got != "expert permutation, step 2" {
		t.Errorf("unknown phase -> %q", got)
	}
}

// TestWrapSetup: a long setup (adapters, quantization) breaks into
// indented lines within 80 columns in both languages, without losing a
// part.
func TestWrapSetup(t *testing.T) {
	o := estimate.Options{Batch: 4, Seq: 4096, Precision: "amp-fp16", Optimizer: "paged-adamw-8bit", OptimizerImpl: "foreach",
		Accum: 8, Checkpointing: true, Attention: "flash",
		PEFT:  estimate.PEFTOptions{Method: "qlora", R: 64, Alpha: 16, Dropout: 0.05, Targets: "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj", ModulesToSave: "lm_head"},
		Quant: estimate.QuantOptions{Method: "nf4", Double: true, ComputeDType: "bf16"}}
	for _, lang := range []language.Tag{i18n.EN, i18n.ZH} {
		tt := estimateCatalog.T(lang)
		parts := []string{"batch 4", "amp-fp16"}
		parts = append(parts, peftSetup(tt, o)...)
		out := "  " + wrapSetup(tt, parts)
		for _, l := range strings.Split(out, "\n") {
			if i18n.Width(l) > 80 || !strings.HasPrefix(l, "  ") {
				t.Errorf("%v: line %q (%d columns)", lang, l, i18n.Width(l))
			}
		}
		for _, p := range parts {
			if !strings.Contains(out, p) {
				t.Errorf("%v: %q lost:\n%s", lang, p, out)
			}
		}
		if !strings.Contains(out, "\n") {
			t.Errorf("%v: no break in a %d-column setup", lang, i18n.Width(out))
		}
	}
}
