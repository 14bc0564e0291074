package lint

// project holds what rules need to know across files: which classes are
// nn.Modules, which functions run with autograd off, which Datasets and
// collate functions run in DataLoader worker processes.
type project struct {
	files         []*file
	host          Host
	moduleClasses map[string]bool
	classNames    map[string]bool
	funcNames     map[string]bool
	noGradCallees map[string]bool
	workerClasses map[string]bool // Dataset / collate classes used with num_workers != 0
	workerFuncs   map[string]bool // collate_fn / worker functions by name
	workerLambdas map[*Node]bool
	// ctxFiles are local modules the linted files import that were not
	// given on the command line: read for summaries and facts, never
	// reported on (see imports_local.go).
	ctxFiles      []*file
	python        string
	topFuncs      map[string][]funcRef
	classDefs     map[string][]funcRef
	summaries     map[*Node]*funcSummary
	summaryDepth  int
	loaderClasses map[string]bool // project classes deriving from DataLoader
	workerLoaders []funcArg       // loader calls that use worker processes
	dictWorkers   map[dictKey]bool
}

// allFiles is the linted files followed by the imported context modules.
func (p *project) allFiles() []*file {
	if len(p.ctxFiles) == 0 {
		return p.files
	}
	return append(append([]*file(nil), p.files...), p.ctxFiles...)
}

func newProject(host Host) *project {
	return &project{
		host:          host,
		moduleClasses: map[string]bool{},
		classNames:    map[string]bool{},
		funcNames:     map[string]bool{},
		noGradCallees: map[string]bool{},
		workerClasses: map[string]bool{},
		workerFuncs:   map[string]bool{},
		workerLambdas: map[*Node]bool{},
		topFuncs:      map[string][]funcRef{},
		classDefs:     map[string][]funcRef{},
		summaries:     map[*Node]*funcSummary{},
		loaderClasses: map[string]bool{},
		dictWorkers:   map[dictKey]bool{},
	}
}

var moduleBases = map[string]bool{
	"Module": true, "PreTrainedModel": true, "LightningModule": true, "Sequential": true,
}

// analyze gathers the cross-file facts, then classifies names per file.
func (p *project) analyze() {
	p.loadLocalImports()
	for _, f := range p.allFiles() {
		for _, c := range f.nodes("ClassDef") {
			p.classNames[c.S("name")] = true
		}
		for _, fn := range f.nodes("FunctionDef", "AsyncFunctionDef") {
			p.funcNames[fn.S("name")] = true
		}
	}
	p.indexDefs()
	p.findModuleClasses()
	p.findLoaderClasses()
	p.findNoGradCallees()
	for _, f := range p.allFiles() {
		f.classify()
		f.findWorkerUse()
	}
}

// findModuleClasses marks classes deriving (through project classes too)
// from nn.Module and its usual subclasses.
func (p *project) findModuleClasses() {
	for changed, rounds := true, 0; changed && rounds < 8; rounds++ {
		changed = false
		for _, f := range p.allFiles() {
			for _, c := range f.nodes("ClassDef") {
				name := c.S("name")
				if p.moduleClasses[name] {
					continue
				}
				for _, b := range c.L("bases") {
					if last := lastName(b); moduleBases[last] || p.moduleClasses[last] {
						p.moduleClasses[name] = true
						changed = true
						break
					}
				}
			}
		}
	}
}

// findNoGradCallees records functions called where autograd is off, to a
// fixed point: evaluate() called under no_grad runs its body under no_grad,
// and so do the helpers evaluate() calls.
func (p *project) findNoGradCallees() {
	for changed, rounds := true, 0; changed && rounds < 6; rounds++ {
		changed = false
		for _, f := range p.allFiles() {
			for _, call := range f.nodes("Call") {
				name := lastName(call.K("func"))
				if name == "" || !p.funcNames[name] || p.noGradCallees[name] {
					continue
				}
				if f.gradOff(call) {
					p.noGradCallees[name] = true
					changed = true
				}
			}
		}
	}
}
