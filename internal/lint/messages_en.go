package lint

// messagesEN is the English text of every finding message, by id (the
// rules' summaries and fixes come from rules.go, see withRuleTexts).
// Explicit argument indexes let a translation reorder or repeat them.
var messagesEN = map[string]string{
	"text.fix": "fix: ",
	"plain":    "%[1]s",

	"tm001.eval_loop":  "%[1]s is called in the evaluation loop at line %[2]d with autograd on: each batch's activations are kept for a backward that never comes",
	"tm001.eval_func":  "%[1]s is called over batches in %[2]s() (loop at line %[3]d) with autograd on: each batch's activations are kept for a backward that never comes",
	"tm001.after_eval": "%[1]s is called after %[1]s.eval() (line %[2]d) with autograd on: the activations are kept for a backward that never comes",

	"tm002.training_step": "%[1]s keeps a tensor with autograd history from every call of training_step (Lightning runs it once per batch): every step's graph stays alive until the list is cleared",
	"tm002.loop":          "%[1]s accumulates a tensor with autograd history across iterations of the loop at line %[2]d: every iteration's graph stays alive",
	"tm002.no_backward":   "%[1]s accumulates a tensor with autograd history across the batches of the loop at line %[2]d, and nothing backpropagates it: every batch's graph stays alive",

	"tm003.not_divided": "the optimizer steps every %[1]s micro-batches (line %[2]d) but the loss is never divided by %[1]s: the accumulated gradient is %[1]s times too large",
	"tm003.outside":     "the optimizer steps every micro-batch, outside the accumulation condition at line %[1]d (every %[2]s steps)",

	"tm004.set_to_none_false": "zero_grad(set_to_none=False) keeps every .grad tensor allocated between steps",
	"tm004.old_default":       "zero_grad() keeps every .grad tensor allocated between steps on PyTorch %[1]s: set_to_none defaults to False before 2.0",
	"tm004.never_zeroed":      "the training loop at line %[1]d never zeroes gradients: they accumulate across steps",

	"tm005.in_loop": "torch.cuda.empty_cache() runs on every iteration of the loop at line %[1]d",

	"tm006.objects": "%[1]s holds per-sample Python objects (%[2]s) and %[3]s is read by DataLoader workers: each worker gradually copies it (copy-on-read)",
	"how.list_comp": "a list comprehension",
	"how.dict_comp": "a dict comprehension",
	"how.dict_loop": "a dict filled in a loop",
	"how.loaded":    "loaded with %[1]s",

	"tm007.init_on_gpu":    "%[1]s.__init__ puts %[2]s on the GPU and %[1]s is read by DataLoader workers: each worker that indexes it creates its own CUDA context (or fails under fork)",
	"tm007.tensor_dataset": "the TensorDataset at line %[1]d holds CUDA tensors and this DataLoader reads it in worker processes: each worker creates its own CUDA context (or fails under fork)",
	"tm007.worker":         "%[1]s runs in DataLoader worker processes and does CUDA work: each worker creates its own CUDA context",
	"tm007.collate_lambda": "the collate_fn lambda",

	"tm008.data": "%[1]s.data is assigned a tensor computed from %[1]s with autograd on: the graph it records is thrown away, and autograd never sees the update",

	"tm009.deprecated": "%[1]s is deprecated; use %[2]s",

	"tm010.kept":       "%[1]s keeps the model output of every batch of the loop at line %[2]d on the device",
	"tm010.kept_graph": "%[1]s keeps the model output of every batch of the loop at line %[2]d on the device, with its autograd graph",

	"tm011.multi_process": "%[1]s without map_location in a multi-process job: every process restores the checkpoint onto the GPU it was saved from (usually cuda:0), all at once",
	"tm011.cpu_inference": "%[1]s without map_location on a CPU inference path: tensors saved on a GPU are restored onto that GPU (or fail to load where there is none)",

	"tm012.retain": "backward(retain_graph=True) in the loop at line %[1]d with no later backward that frees the graph",

	"tm013.nproc": "num_workers=%[1]d needs about %[2]d tasks but this host's process limit (ulimit -u) is %[3]d",
	"tm013.shm":   "num_workers=%[1]d with prefetch_factor=%[2]d keeps %[3]d batches in /dev/shm, at least %[4]s, but /dev/shm here is %[5]s",

	"tm014.set":     "autograd anomaly detection switched on unconditionally",
	"tm014.context": "autograd anomaly detection (detect_anomaly) used outside any debug condition",

	"tm015.appends.forward":  "the forward hook appends a tensor with autograd history to %[1]s, which is never cleared: every pass keeps another batch and its graph",
	"tm015.appends.backward": "the backward hook appends a tensor with autograd history to %[1]s, which is never cleared: every pass keeps another batch and its graph",
	"tm015.stores_grad":      "the backward hook stores a gradient without .detach(): the stored tensor, its graph and the hook form a reference cycle that only the cycle collector frees",

	"tm016.fed_back":               "%[1]s is fed back into %[2]s on every iteration of the training loop at line %[3]d without .detach(): each batch's graph stays linked to all the previous ones",
	"tm016.fed_back_retained":      "%[1]s is fed back into %[2]s on every iteration of the training loop at line %[3]d without .detach(): each batch's graph stays linked to all the previous ones; retain_graph=True there keeps them all alive (dropping it alone makes backward fail)",
	"tm016.fed_back_many":          "%[1]s are fed back into %[2]s on every iteration of the training loop at line %[3]d without .detach(): each batch's graph stays linked to all the previous ones",
	"tm016.fed_back_many_retained": "%[1]s are fed back into %[2]s on every iteration of the training loop at line %[3]d without .detach(): each batch's graph stays linked to all the previous ones; retain_graph=True there keeps them all alive (dropping it alone makes backward fail)",
	"tm016.module_state":           "%[1]s is fed back into %[2]s by forward and kept on the module across the iterations of the training loop at line %[3]d without .detach(): each batch's graph stays linked to all the previous ones",
	"tm016.module_state_retained":  "%[1]s is fed back into %[2]s by forward and kept on the module across the iterations of the training loop at line %[3]d without .detach(): each batch's graph stays linked to all the previous ones; retain_graph=True there keeps them all alive (dropping it alone makes backward fail)",

	"tm017.gc": "gc.collect() in %[1]s.%[2]s runs a full garbage collection for every sample",

	"tm018.handle": "%[1]s opens a %[2]s handle in __init__ (%[3]s) and %[1]s is read by DataLoader workers: every worker inherits the one handle",

	"tm019.moved": "%[1]s(...) builds the tensor in host memory and .%[2]s() copies it to the GPU on every iteration of the loop at line %[3]d",

	"tm020.counter": "the loss is backpropagated every iteration but the optimizer steps only when %[1]s (line %[2]d): the gradients of several batches are summed and the loss is never divided by their number",
	"tm020.inner":   "the loss is backpropagated in every iteration of the accumulation loop at line %[1]d and the optimizer steps after it: the gradients of %[2]s micro-batches are summed and the loss is never divided by their number",

	// Fixes and messages that depend on the file's PyTorch (versionfix.go).
	"version.on":               "(PyTorch %[1]s here, from %[2]s)",
	"version.tm001.fix":        "wrap the evaluation in `with torch.no_grad():`, or decorate the function with `@torch.no_grad()`; torch.inference_mode needs PyTorch 1.9 %[1]s",
	"version.tm004.fix":        "call `optimizer.zero_grad(set_to_none=True)` once per optimizer step: before PyTorch 2.0 the default is set_to_none=False %[1]s",
	"version.tm005.fix_old":    "remove it from the loop %[1]s",
	"version.tm005.fix":        "remove it from the loop; if fragmentation is the problem set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 (expandable_segments needs PyTorch 2.1) %[1]s",
	"version.tm009.fix":        "use `torch.amp.autocast(\"cuda\", ...)`; keep `torch.cuda.amp.GradScaler()` until PyTorch 2.3, which adds `torch.amp.GradScaler(\"cuda\")` %[1]s",
	"version.tm009.warns_from": "%[1]s; it warns from PyTorch 2.4 %[2]s",
}
