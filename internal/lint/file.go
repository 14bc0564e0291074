package lint

import (
	"regexp"
	"strings"
)

// file is one parsed module with the indexes the rules share.
type file struct {
	path          string
	mod           *Node
	lines         []string
	proj          *project
	imports       map[string]string // local name -> qualified module path
	byType        map[string][]*Node
	gradOffLines  map[*Node][]int
	models        map[string]bool // dotted receivers known to be nn.Modules
	modelLast     map[string]bool // their last names, for a cheap first test
	losses        map[string]bool // dotted names bound to loss modules
	optims        map[string]bool // dotted names bound to optimizers
	findings      []Finding
	cuda          *bool // memoised usesCUDA
	assignedCalls map[string][]string
	frozenModels  map[string]bool
	torch         TorchVersion // the PyTorch the file runs with (version.go)
}

func newFile(path string, mod *Node, src []byte, proj *project) *file {
	f := &file{
		path: path, mod: mod, proj: proj,
		lines:        strings.Split(string(src), "\n"),
		imports:      map[string]string{},
		byType:       map[string][]*Node{},
		gradOffLines: map[*Node][]int{},
		models:       map[string]bool{},
		modelLast:    map[string]bool{},
		losses:       map[string]bool{},
		optims:       map[string]bool{},
	}
	mod.Walk(func(n *Node) bool {
		f.byType[n.Type] = append(f.byType[n.Type], n)
		return true
	})
	f.indexImports()
	return f
}

func (f *file) nodes(types ...string) []*Node {
	if len(types) == 1 {
		return f.byType[types[0]]
	}
	var out []*Node
	for _, t := range types {
		out = append(out, f.byType[t]...)
	}
	return out
}

// indexImports records what each imported local name stands for:
// "import torch.nn as nn" -> nn=torch.nn, "from torch.cuda.amp import
// autocast" -> autocast=torch.cuda.amp.autocast. Relative imports are left
// out: they never name torch.
func (f *file) indexImports() {
	for _, n := range f.nodes("Import") {
		for _, a := range n.L("names") {
			name, as := a.S("name"), a.S("asname")
			if as != "" {
				f.imports[as] = name
			} else {
				first, _, _ := strings.Cut(name, ".")
				f.imports[first] = first
			}
		}
	}
	for _, n := range f.nodes("ImportFrom") {
		mod := n.S("module")
		if lvl, _ := n.Get("level").(int); lvl > 0 || mod == "" {
			continue
		}
		for _, a := range n.L("names") {
			name, as := a.S("name"), a.S("asname")
			if as == "" {
				as = name
			}
			f.imports[as] = mod + "." + name
		}
	}
}

// qualify spells an expression with its imports resolved:
// amp.autocast -> torch.cuda.amp.autocast after "from torch.cuda import amp".
func (f *file) qualify(n *Node) string {
	d := dotted(n)
	first, rest, hasRest := strings.Cut(d, ".")
	q, ok := f.imports[first]
	if !ok {
		return d
	}
	if hasRest {
		return q + "." + rest
	}
	return q
}

var (
	modelNameRe = regexp.MustCompile(`^(model|net|network|netG|netD|generator|discriminator|encoder|decoder|backbone|teacher|student|classifier_model)$|[a-z0-9]_?model$|_net$`)
	lossNameRe  = regexp.MustCompile(`^(criterion|criterion_[a-z0-9_]+|[a-z0-9_]+_criterion|loss_fn|loss_func|lossfn|loss_function|loss_fct|compute_loss)$`)
	optimNameRe = regexp.MustCompile(`^(optim|optimizer|optimiser|opt)(_?[a-zA-Z0-9]+)?$|_(optim|optimizer|opt)$`)
)

var functionalLosses = map[string]bool{
	"cross_entropy": true, "nll_loss": true, "mse_loss": true, "l1_loss": true,
	"smooth_l1_loss": true, "huber_loss": true, "binary_cross_entropy": true,
	"binary_cross_entropy_with_logits": true, "kl_div": true, "ctc_loss": true,
	"cosine_embedding_loss": true, "margin_ranking_loss": true, "triplet_margin_loss": true,
	"poisson_nll_loss": true, "gaussian_nll_loss": true, "hinge_embedding_loss": true,
	"soft_margin_loss": true, "multilabel_soft_margin_loss": true, "multi_margin_loss": true,
}

var optimizerClasses = map[string]bool{
	"SGD": true, "Adam": true, "AdamW": true, "RMSprop": true, "Adagrad": true, "Adadelta": true,
	"Adamax": true, "NAdam": true, "RAdam": true, "LBFGS": true, "SparseAdam": true,
	"Adafactor": true, "Lion": true, "FusedAdam": true, "Lamb": true, "ZeroRedundancyOptimizer": true,
}

var wrapperClasses = map[string]bool{
	"DistributedDataParallel": true, "DataParallel": true, "DDP": true,
	"FullyShardedDataParallel": true, "FSDP": true,
}

// torchEcosystem are top-level packages whose users write PyTorch code.
var torchEcosystem = map[string]bool{
	"torch": true, "torchvision": true, "torchaudio": true, "torchtext": true,
	"lightning": true, "pytorch_lightning": true, "transformers": true, "accelerate": true,
	"timm": true, "deepspeed": true, "fairseq": true, "mmcv": true, "mmengine": true,
	"detectron2": true, "ignite": true, "diffusers": true, "peft": true, "trl": true,
	"composer": true, "fastai": true, "monai": true, "apex": true, "torch_geometric": true,
	"torchmetrics": true, "functorch": true, "xformers": true, "bitsandbytes": true,
}

// usesTorch reports an import from the PyTorch ecosystem. Rules look for
// models, losses and tensors; in a file that imports none of these
// libraries, names like model, log.eval or x.data mean something else.
func (f *file) usesTorch() bool {
	for _, q := range f.imports {
		top, _, _ := strings.Cut(q, ".")
		if torchEcosystem[top] {
			return true
		}
	}
	return false
}
