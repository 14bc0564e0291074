package estimate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// PEFTOptions are LoRA adapters as Hugging Face PEFT adds them
// (get_peft_model with a LoraConfig), on a frozen base: in the model's
// half dtype (lora), or quantized by bitsandbytes and prepared with
// prepare_model_for_kbit_training (qlora).
//
// What the walk does differently, from PEFT's and bitsandbytes' code:
//   - Only the adapters (lora_A: r×in, lora_B: out×r, per targeted
//     linear) and modules_to_save copies are trainable: they alone get
//     gradients and optimizer states. PEFT keeps adapters in fp32
//     (get_peft_model's autocast_adapter_dtype=True upcasts bf16/fp16
//     adapter weights), so their gradients and Adam states are fp32.
//   - A frozen linear saves nothing for backward (its weight needs no
//     gradient, so autograd does not keep its input); the LoRA branch
//     saves its own input: PEFT's Linear casts x to the adapter's dtype
//     (fp32, a copy per adapter), dropout saves a mask, and under
//     autocast lora_A keeps a half copy of what it reads.
//   - A quantized base dequantizes its weight for each GEMM, in forward
//     and again in backward (bitsandbytes' MatMul4Bit), a temporary the
//     size of the layer; its output is cast back to the input's dtype,
//     and PEFT clones it (lora/bnb.py: "defensively clone").
//   - prepare_model_for_kbit_training casts every parameter that is not
//     quantized (embeddings, norms, lm_head) to fp32, so the residual
//     stream and every linear's output are fp32, and turns gradient
//     checkpointing on with use_reentrant=True, which needs the
//     embeddings' output to require grad (enable_input_require_grads):
//     block 0 then computes its input's gradient too.
type PEFTOptions struct {
	Method string `json:"method,omitempty"` // lora or qlora
	R      int    `json:"r,omitempty"`
	Alpha  int    `json:"alpha,omitempty"`
	// Dropout is lora_dropout: above 0, each adapter saves a mask of its input.
	Dropout float64 `json:"dropout,omitempty"`
	// Targets are target_modules as PEFT matches them (a module whose
	// name is, or ends with "." and, one of them), comma-separated, or
	// "all-linear". A string, not a list, keeps Options comparable.
	Targets string `json:"targets,omitempty"`
	// ModulesToSave are modules trained in full (a trainable copy next
	// to the frozen original), e.g. lm_head or embed_tokens; comma-separated.
	ModulesToSave string `json:"modules_to_save,omitempty"`
	// NonReentrant is gradient checkpointing with use_reentrant=False.
	NonReentrant bool `json:"non_reentrant,omitempty"`
	// NoKbitPrep skips prepare_model_for_kbit_training (qlora).
	NoKbitPrep bool `json:"no_kbit_prep,omitempty"`
	// BaseFP32 (lora with amp-*): the frozen base was loaded in fp32
	// (from_pretrained without torch_dtype, as transformers 4.x does by
	// default) and runs under autocast; default: loaded in the half dtype.
	BaseFP32 bool `json:"base_fp32,omitempty"`
	// TRLBF16Cast: TRL's SFTTrainer given a peft_config, a 4-bit model and
	// bf16=True casts the fp32 embeddings and lm_head back to bf16 after
	// prepare_model_for_kbit_training (trlCastsToHalf).
	TRLBF16Cast bool `json:"trl_bf16_cast,omitempty"`
}

// trlCastsToHalf: p is a parameter TRL's peft_module_casting_to_bf16
// returns to bf16. SFTTrainer calls it after get_peft_model when
// args.bf16 and the model is loaded in 4 bits (not sharded QLoRA); it
// casts every module whose name contains lm_head, embed_tokens, wte or wpe
// and whose weight is fp32 to bf16, and leaves norms in fp32 and the
// adapters as they are (trl/trainer/sft_trainer.py and
// trl/trainer/utils.py, v0.9 to v0.13). A tied lm_head is the embedding's
// weight, so one cast covers both. Without prepare_model_for_kbit_training
// these weights are bf16 already.
func trlCastsToHalf(o Options, name string) bool {
	if !o.PEFT.TRLBF16Cast || o.PEFT.NoKbitPrep {
		return false
	}
	for _, s := range []string{"lm_head", "embed_tokens", "wte", "wpe"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// The defaults of PEFT's LoraConfig and of the QLoRA recipe.
const (
	defaultLoRARank  = 8
	defaultLoRAAlpha = 8 // LoraConfig(lora_alpha=8)
)

// defaultTargets is PEFT's TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING
// for md's family (its loraTargets): what target_modules=None picks; nil
// for a family whose adapters are not modelled.
func defaultTargets(md *models.Model) []string {
	f, err := familyOf(md)
	if err != nil {
		return nil
	}
	return f.loraTargets()
}

func (o *Options) checkPEFTQuant() error {
	p := &o.PEFT
	if p.Method == "qlora" && o.Quant.Method == "" {
		o.Quant.Method = "nf4" // the QLoRA recipe's 4-bit NormalFloat
	}
	if err := o.Quant.check(o); err != nil {
		return err
	}
	paged := strings.HasPrefix(o.Optimizer, "paged-")
	if p.Method == "" {
		switch {
		case p.R != 0 || p.Alpha != 0 || p.Targets != "" || p.Dropout != 0 || p.ModulesToSave != "":
			return fmt.Errorf("--lora-r, --lora-alpha, --lora-targets, --lora-dropout and --modules-to-save need --peft lora or qlora")
		case p.NonReentrant:
			return fmt.Errorf("--use-reentrant applies to --peft with --checkpointing")
		case paged:
			return fmt.Errorf("--optimizer %s: paged optimizers are modelled with --peft", o.Optimizer)
		}
		return nil
	}
	switch {
	case p.Method != "lora" && p.Method != "qlora":
		return fmt.Errorf("--peft %q: want lora or qlora", p.Method)
	case o.Inference:
		return fmt.Errorf("--peft is for training; for inference give the merged model (or --quant)")
	case p.Method == "lora" && o.Quant.Method != "":
		return fmt.Errorf("--quant %s with --peft lora: a quantized base is --peft qlora", o.Quant.Method)
	case p.R < 0 || p.R > 1<<16:
		return fmt.Errorf("--lora-r %d out of range (1..65536)", p.R)
	case p.Alpha < 0:
		return fmt.Errorf("--lora-alpha %d: want a positive number", p.Alpha)
	case p.Dropout < 0 || p.Dropout >= 1:
		return fmt.Errorf("--lora-dropout %g: want a probability in [0, 1)", p.Dropout)
	case o.ZeroStage >= 3:
		return fmt.Errorf("--peft with --zero 3 / --fsdp is not modelled (give DDP or ZeRO 1/2)")
	case p.BaseFP32 && (p.Method != "lora" || !strings.HasPrefix(o.Precision, "amp-")):
		return fmt.Errorf("--lora-base-fp32 applies to --peft lora with --precision amp-bf16 or amp-fp16 (with fp32 the base is fp32 already; a qlora base is quantized)")
	case p.NoKbitPrep && p.Method != "qlora":
		return fmt.Errorf("--kbit-prep=false applies to --peft qlora")
	case p.TRLBF16Cast && (p.Method != "qlora" || o.Precision != "amp-bf16"):
		return fmt.Errorf("--trl-bf16-cast applies to --peft qlora with --precision amp-bf16 (TRL casts only for a 4-bit model with bf16=True)")
	case p.NonReentrant && !o.Checkpointing:
		return fmt.Errorf("--use-reentrant applies with --checkpointing")
	case !oneOf(strings.TrimPrefix(o.Optimizer, "paged-"), []string{"adamw", "adam", "adamw-8bit", "sgd", "sgd-momentum"}):
		return fmt.Errorf("--optimizer %s with --peft: want adamw, adam, adamw-8bit, paged-adamw, paged-adamw-8bit, sgd or sgd-momentum", o.Optimizer)
	}
	if p.R == 0 {
		p.R = defaultLoRARank
	}
	if p.Alpha == 0 {
		p.Alpha = defaultLoRAAlpha
	}
	return nil
}

// checkPEFTModel: the families whose linears the walk names, and target
// modules that exist (PEFT raises "Target modules ... not found").
func checkPEFTModel(md *models.Model, o Options) error {
	if o.PEFT.Method == "" && o.Quant.Method == "" {
		return nil
	}
	if defaultTargets(md) == nil {
		what := "--peft"
		if o.PEFT.Method == "" {
			what = "--quant"
		}
		return fmt.Errorf("%s is modelled for GPT-2, Llama-style, mixture-of-experts and BERT models, not %s", what, md.Family)
	}
	if o.PEFT.Method == "" {
		return nil
	}
	plan := planPEFT(md, o)
	if plan.adapters == 0 {
		return fmt.Errorf("--lora-targets %s: no module of %s matches (its linears: %s)",
			strings.Join(targetsOf(md, o), ","), md.Name, strings.Join(linearNames(md), ", "))
	}
	for _, m := range o.PEFT.saveList() {
		if !plan.saved[m] {
			return fmt.Errorf("--modules-to-save %s: no module of %s has that name", m, md.Name)
		}
	}
	return nil
}

// PEFTParams is what PEFT's print_trainable_parameters() prints for md
// with o: the trainable parameters (adapters and modules_to_save copies)
// and all parameters (the base, the adapters and the copies).
func PEFTParams(md *models.Model, o Options) (trainable, all int64, err error) {
	if err := o.Defaults(); err != nil {
		return 0, 0, err
	}
	if err := checkPEFTModel(md, o); err != nil {
		return 0, 0, err
	}
	if o.PEFT.Method == "" {
		return md.ParamCount(), md.ParamCount(), nil
	}
	p := planPEFT(md, o)
	return p.trainable, md.ParamCount() + p.trainable, nil
}

type paramKey struct {
	block int
	name  string
}

func keyOf(p models.Param) paramKey { return paramKey{p.Block, p.Name} }

// trainTensor is one trainable tensor: an adapter matrix or a copy of a
// modules_to_save parameter, kept with the base parameter it belongs to.
type trainTensor struct {
	elems, dt int64
	matmul    bool
}

// linInfo is one linear layer in the order a block's forward calls it.
type linInfo struct {
	in, out   int64
	wdt       int64 // element size of an unquantized weight
	quant     bool
	rank      int64 // LoRA rank, 0 without an adapter
	trainable bool  // modules_to_save: the whole layer trains
}

// peftPlan is what PEFT and quantization make of md's parameters.
type peftPlan struct {
	byParam   map[paramKey][]trainTensor
	wdt       map[paramKey]int64 // unquantized weights' element sizes
	quant     map[paramKey]bool
	linears   map[paramKey]*linInfo
	saved     map[string]bool // modules_to_save names found
	trainable int64
	adapters  int
}

// peftState is the plan plus what the walk tracks with it.
type peftState struct {
	peftPlan
	peft      bool
	computeDT int64
	linears   [][]*linInfo // per block + 1 (0: outside the blocks), in call order
	blk, n    int          // the block being walked and the linears it has called
	gradBlock int          // the block whose gradients were made last
	madeState bool
	trainList []trainTensor
	pagedByte int64 // paged optimizer states: CUDA managed memory, outside the allocator
	// keptBlock and keptStep are bitsandbytes inputs kept with their
	// autograd nodes (keepNodeInput): to the end of the block's backward,
	// or of the step's.
	keptBlock, keptStep []*tensor
}

// moduleOf is a parameter's module name (its name without .weight/.bias).
func moduleOf(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[:i]
	}
	return name
}

// matches is PEFT's check_target_module_exists for a list of names: the
// module's name equals the key or ends with "." + key.
func matches(module string, keys []string) bool {
	for _, k := range keys {
		if module == k || strings.HasSuffix(module, "."+k) {
			return true
		}
	}
	return false
}

// embeddingName: an embedding table (nn.Embedding, not a linear layer),
// even where it doubles as the tied output layer.
func embeddingName(name string) bool {
	for _, s := range []string{"embed", "wte", "wpe", "shared", "relative_attention_bias"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// outputLayer: the layer PEFT's all-linear leaves out (the output
// embedding or classifier).
func outputLayer(module string) bool {
	return oneOf(module, []string{"lm_head", "score", "classifier", "cls.predictions.decoder"})
}

// linearNames are the last components of md's linear modules, as PEFT's
// all-linear collects them, minus the output layer.
func linearNames(md *models.Model) []string {
	set := map[string]bool{}
	for _, p := range md.Params() {
		m := moduleOf(p.Name)
		if !p.Matmul || embeddingName(p.Name) || outputLayer(m) {
			continue
		}
		set[m[strings.LastIndexByte(m, '.')+1:]] = true
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// list splits a comma-separated flag value.
func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func (p PEFTOptions) saveList() []string { return list(p.ModulesToSave) }

func targetsOf(md *models.Model, o Options) []string {
	t := list(o.PEFT.Targets)
	if len(t) == 0 {
		return defaultTargets(md)
	}
	if len(t) == 1 && t[0] == "all-linear" {
		return linearNames(md)
	}
	return t
}

// linearDims are a linear weight's input and output features.
func linearDims(md *models.Model, p models.Param) (in, out int64) {
	h, I := int64(md.Hidden), int64(md.Intermediate)
	q, kv := int64(md.Heads*md.HeadDim), int64(md.KVHeads*md.HeadDim)
	m := moduleOf(p.Name)
	last := m[strings.LastIndexByte(m, '.')+1:]
	switch {
	case last == "q_proj":
		return h, q
	case last == "k_proj" || last == "v_proj":
		return h, kv
	case last == "o_proj":
		return q, h
	case last == "gate_proj" || last == "up_proj" || last == "c_fc" || m == "intermediate.dense":
		return h, I
	case last == "down_proj" || m == "mlp.c_proj" || m == "output.dense":
		return I, h
	case last == "c_attn":
		return h, 3 * h
	}
	// lm_head, score, classifier, the tied embedding, square projections.
	if p.Elems%h == 0 {
		return h, p.Elems / h
	}
	return h, max(1, p.Elems/h)
}

// baseDT is the element size of the frozen base: 4 for fp32 or with
// BaseFP32 (from_pretrained without torch_dtype, then autocast), else 2
// (the half dtype the model was loaded in).
func baseDT(o Options) int64 {
	if o.Precision == "fp32" || o.PEFT.BaseFP32 {
		return 4
	}
	return 2
}

// planPEFT places adapters, modules_to_save copies, quantized weights
// and dtypes on md's parameters.
func planPEFT(md *models.Model, o Options) peftPlan {
	pl := peftPlan{byParam: map[paramKey][]trainTensor{}, wdt: map[paramKey]int64{}, quant: map[paramKey]bool{},
		linears: map[paramKey]*linInfo{}, saved: map[string]bool{}}
	base := baseDT(o)
	nonQuant := base
	if o.PEFT.Method == "qlora" && !o.PEFT.NoKbitPrep {
		nonQuant = 4 // prepare_model_for_kbit_training
	}
	targets := targetsOf(md, o)
	r := int64(o.PEFT.R)
	for _, p := range md.Params() {
		k, m := keyOf(p), moduleOf(p.Name)
		isLinear := p.Matmul && !embeddingName(p.Name)
		quant := o.Quant.Method != "" && p.Block >= 0 && isLinear
		pl.quant[k] = quant
		pl.wdt[k] = nonQuant
		if !quant && o.Quant.Method == "" || !quant && trlCastsToHalf(o, p.Name) {
			pl.wdt[k] = base
		}
		var li *linInfo
		if p.Matmul {
			in, out := linearDims(md, p)
			li = &linInfo{in: in, out: out, wdt: pl.wdt[k], quant: quant}
			pl.linears[k] = li
		}
		if o.PEFT.Method == "" {
			continue
		}
		if isLinear && strings.HasSuffix(p.Name, ".weight") && matches(m, targets) && !outputLayer(m) || isLinear && m == "lm_head" && oneOf("lm_head", targets) {
			// lora_A (r×in) and lora_B (out×r), fp32 (autocast_adapter_dtype).
			li.rank = r
			pl.byParam[k] = append(pl.byParam[k], trainTensor{r * li.in, 4, true}, trainTensor{li.out * r, 4, true})
			pl.trainable += r * (li.in + li.out)
			pl.adapters++
		}
		// A tied output layer (lm_head sharing the embeddings' weight) is a
		// module of its own in transformers; PEFT wraps it by that name.
		names := []string{m}
		if md.Tied && p.Block < 0 && p.Matmul && embeddingName(p.Name) {
			names = append(names, "lm_head", "cls.predictions.decoder")
		}
		for _, name := range names {
			save := o.PEFT.saveList()
			if !matches(name, save) {
				continue
			}
			for _, s := range save {
				if name == s || strings.HasSuffix(name, "."+s) {
					pl.saved[s] = true
				}
			}
			// ModulesToSaveWrapper: a deep copy, in the original's dtype.
			pl.byParam[k] = append(pl.byParam[k], trainTensor{p.Elems, pl.wdt[k], p.Matmul})
			pl.trainable += p.Elems
			if li != nil {
				li.trainable = true
			}
		}
	}
	return pl
}

// initPEFT sets up the walk for PEFT and quantized weights.
func (e *ctx) initPEFT() {
	o := e.o
	if o.PEFT.Method == "" && o.Quant.Method == "" {
		return
	}
	pq := &peftState{peftPlan: planPEFT(e.md, o), peft: o.PEFT.Method != "", blk: -1, gradBlock: -1, computeDT: 2}
	if o.Quant.Method == "nf4" || o.Quant.Method == "fp4" {
		pq.computeDT = o.Quant.computeDT(o.Precision)
	}
	pq.linears = make([][]*linInfo, len(e.blockParams)+1)
	for _, p := range e.params {
		if li := pq.peftPlan.linears[keyOf(p)]; li != nil {
			b := p.Block + 1
			if p.Block < 0 || p.Block >= len(e.blockParams) {
				b = 0
			}
			pq.linears[b] = append(pq.linears[b], li)
		}
	}
	for _, p := range e.params {
		pq.trainList = append(pq.trainList, pq.byParam[keyOf(p)]...)
	}
	e.pq = pq
	if !pq.peft {
		return
	}
	if e.o.PEFT.Targets == "" { // the result says what PEFT picked
		e.o.PEFT.Targets = strings.Join(defaultTargets(e.md), ",")
	}
	// The frozen base's dtypes; the adapters' gradients and states are fp32.
	nonQuant := baseDT(o)
	if o.PEFT.Method == "qlora" && !o.PEFT.NoKbitPrep {
		nonQuant = 4
	}
	e.dt = dtypes{param: nonQuant, grad: 4, state: 4, work: nonQuant, unshardedGrad: 4, compute: nonQuant,
		resid: nonQuant, norm: nonQuant, autocast: strings.HasPrefix(o.Precision, "amp-")}
	if o.PEFT.BaseFP32 { // autocast over fp32 weights: the GEMMs' outputs are half
		e.dt.compute = 2
	}
}

// enterBlock: the walk starts block i's forward (-1: outside the blocks).
func (e *ctx) enterBlock(i int) {
	if e.pq != nil {
		e.pq.blk, e.pq.n = i, 0
	}
}

// nextLinear is the linear layer a GEMM of x into outElems runs: in a
// block the next in call order (the order of the block's parameters);
// outside, the one whose shape fits.
func (e *ctx) nextLinear(x *tensor, outElems int64) *linInfo {
	pq := e.pq
	if pq.blk >= 0 && pq.blk+1 < len(pq.linears) {
		l := pq.linears[pq.blk+1]
		if pq.n < len(l) {
			pq.n++
			return l[pq.n-1]
		}
		return nil
	}
	for _, li := range pq.linears[0] {
		if outElems%li.out == 0 && x.elems%li.in == 0 && outElems/li.out == x.elems/li.in {
			return li
		}
	}
	return nil
}

// peftLinear is a GEMM through a frozen, quantized or adapted linear.
func (e *ctx) peftLinear(x *tensor, outElems int64) *tensor {
	li := e.nextLinear(x, outElems)
	if li == nil || li.trainable || !e.pq.peft && !li.quant {
		if li == nil && e.pq.peft {
			return e.frozenLinear(x, &linInfo{wdt: e.dt.param}, outElems)
		}
		return e.savingLinear(x, outElems)
	}
	var r *tensor
	if li.quant {
		r = e.quantLinear(x, li, outElems)
	} else {
		r = e.frozenLinear(x, li, outElems)
	}
	if li.rank == 0 {
		return r
	}
	return e.loraBranch(x, r, li, outElems)
}

// savingLinear is a GEMM whose weight trains: it saves its input.
func (e *ctx) savingLinear(x *tensor, outElems int64) *tensor {
	in := e.castIn(x)
	out := e.act(outElems, e.dt.compute)
	if !e.dt.autocast && e.pq.peft {
		out.dt = x.dt
	}
	e.m.save(in)
	if in != x {
		e.m.drop(in)
	}
	return out
}

// frozenLinear: a weight without gradient needs none of its input, so
// autograd keeps nothing new (the weight itself is saved for the input's
// gradient). Under autocast the output is half; otherwise the weight's.
func (e *ctx) frozenLinear(x *tensor, li *linInfo, outElems int64) *tensor {
	in, dt := x, li.wdt
	var w *tensor
	if e.dt.autocast {
		dt = 2
		if x.dt == 4 {
			in = e.act(x.elems, 2)
		}
		if li.wdt == 4 && li.in > 0 {
			// Autocast casts a frozen fp32 weight for each call (it caches
			// only weights that require grad); the GEMM keeps the copy for
			// its input's gradient when autograd records.
			w = e.act(li.in*li.out, 2)
			e.m.save(w)
		}
	}
	out := e.act(outElems, dt)
	if in != x {
		e.m.drop(in)
	}
	e.m.drop(w)
	return out
}

// loraBranch adds lora_B(lora_A(dropout(x))) * scaling to the base
// output r, as PEFT's lora.Linear (and lora/bnb.py's Linear4bit/8bitLt)
// run it.
func (e *ctx) loraBranch(x, r *tensor, li *linInfo, outElems int64) *tensor {
	rows := outElems / li.out
	bnb := li.quant && e.o.Quant.bnb()
	rdt := r.dt
	if bnb && e.o.Quant.Method != "int8" {
		c := e.act(r.elems, r.dt) // result = result.clone()
		e.m.drop(r)
		r = c
	}
	// x = self._cast_input_dtype(x, lora_A.weight.dtype): the plain layer
	// always, the bitsandbytes ones only outside autocast.
	conv := !bnb || !e.dt.autocast
	var tmp []*tensor
	xa := x
	if conv && x.dt != 4 {
		xa = e.act(x.elems, 4)
		tmp = append(tmp, xa)
	}
	xd := xa
	if p := e.o.PEFT.Dropout; p > 0 {
		mask := e.act(xa.elems, 1)
		xd = e.act(xa.elems, xa.dt)
		e.m.save(mask)
		tmp = append(tmp, mask, xd)
	}
	ain := xd
	if e.dt.autocast && xd.dt == 4 {
		ain = e.act(xd.elems, 2)
		tmp = append(tmp, ain)
	}
	e.m.save(ain)
	low := int64(4)
	if e.dt.autocast {
		low = 2
	}
	a := e.act(rows*li.rank, low)
	e.m.save(a) // lora_B's input
	b := e.act(outElems, low)
	s := e.act(outElems, low) // * scaling
	e.m.drop(b)
	if bnb && conv && s.dt != rdt { // output.to(expected_dtype)
		c := e.act(outElems, rdt)
		e.m.drop(s)
		s = c
	}
	sum := e.act(outElems, promote(r.dt, s.dt))
	e.m.drop(r, s, a)
	e.m.drop(tmp...)
	if sum.dt != rdt { // result.to(torch_result_dtype)
		c := e.act(outElems, rdt)
		e.m.drop(sum)
		sum = c
	}
	return sum
}

// loadPEFT puts the model on the GPU as from_pretrained with a
// quantization config and get_peft_model do: each weight arrives in its
// dtype (bitsandbytes quantizes it on the GPU from a half copy), then
// prepare_model_for_kbit_training upcasts what is not quantized, then
// the adapters are added.
func (e *ctx) loadPEFT() {
	m, pq := e.m, e.pq
	half := baseDT(e.o) // what the base was loaded in
	var upcast []*tensor
	for _, p := range e.params {
		k := keyOf(p)
		if li := pq.peftPlan.linears[k]; pq.quant[k] && li != nil {
			var src *tensor
			if e.o.Quant.bnb() {
				src = m.new(p.Elems, half, CatWeights)
			}
			for _, part := range e.o.Quant.quantParts(li.in, li.out) {
				c := CatWeights
				if part.consts {
					c = CatQuantConsts
				}
				m.new(part.elems, part.dt, c)
			}
			m.drop(src)
			continue
		}
		if pq.wdt[k] != half && pq.peft {
			upcast = append(upcast, m.new(e.shard(p.Elems, 3), half, CatWeights))
			continue
		}
		m.new(e.shard(p.Elems, 3), pq.wdt[k], CatWeights)
	}
	// param.data = param.data.to(torch.float32), one parameter at a time.
	for _, t := range upcast {
		m.new(t.elems, 4, CatWeights)
		m.drop(t)
	}
	for _, t := range pq.trainList {
		m.new(t.elems, t.dt, CatAdapters)
	}
	e.gptqScratch()
	m.peak, m.peakCats, m.peakPhase = m.total, m.cur, m.phase
}
