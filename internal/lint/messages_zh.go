package lint

// messagesZH is the Simplified Chinese text of every message id, the
// rules' summaries and fixes included, with the same %[n] arguments. Code,
// API names and the words users search for (autograd, DataLoader, worker,
// num_workers, CUDA context, PYTORCH_CUDA_ALLOC_CONF) stay in English;
// where Chinese usage varies, the English term follows in brackets.
var messagesZH = map[string]string{
	"text.fix": "修复：",
	"plain":    "%[1]s",

	"tm001.eval_loop":  "%[1]s 在第 %[2]d 行的评估循环中调用，且 autograd 开启：每个批次的激活值都被保留，等待一个永远不会发生的 backward",
	"tm001.eval_func":  "%[1]s 在 %[2]s() 中按批次调用（第 %[3]d 行的循环），且 autograd 开启：每个批次的激活值都被保留，等待一个永远不会发生的 backward",
	"tm001.after_eval": "%[1]s 在 %[1]s.eval()（第 %[2]d 行）之后调用，且 autograd 开启：激活值被保留，等待一个永远不会发生的 backward",

	"tm002.training_step": "%[1]s 在每次调用 training_step 时都保留一个带 autograd 历史的张量（Lightning 每个批次调用一次）：在列表被清空之前，每一步的计算图都不会释放",
	"tm002.loop":          "%[1]s 在第 %[2]d 行循环的各次迭代间累加带 autograd 历史的张量：每次迭代的计算图都不会释放",
	"tm002.no_backward":   "%[1]s 在第 %[2]d 行循环的各个批次间累加带 autograd 历史的张量，且没有对它做反向传播：每个批次的计算图都不会释放",

	"tm003.not_divided": "优化器每 %[1]s 个微批次 (micro-batch) 才 step 一次（第 %[2]d 行），但 loss 从未除以 %[1]s：累积的梯度大了 %[1]s 倍",
	"tm003.outside":     "优化器在第 %[1]d 行的累积条件（每 %[2]s 步）之外，每个微批次都 step 一次",

	"tm004.set_to_none_false": "zero_grad(set_to_none=False) 让每个 .grad 张量在两步之间一直占着内存",
	"tm004.old_default":       "在 PyTorch %[1]s 上，zero_grad() 让每个 .grad 张量在两步之间一直占着内存：2.0 之前 set_to_none 默认为 False",
	"tm004.never_zeroed":      "第 %[1]d 行的训练循环从不清零梯度：梯度会在各步之间不断累加",

	"tm005.in_loop": "torch.cuda.empty_cache() 在第 %[1]d 行循环的每次迭代中都会执行",

	"tm006.objects": "%[1]s 保存了按样本的 Python 对象（%[2]s），而 %[3]s 会被 DataLoader worker 读取：每个 worker 都会逐渐复制一份（读时复制 (copy-on-read)）",
	"how.list_comp": "列表推导式",
	"how.dict_comp": "字典推导式",
	"how.dict_loop": "在循环中填充的字典",
	"how.loaded":    "由 %[1]s 加载",

	"tm007.init_on_gpu":    "%[1]s.__init__ 把 %[2]s 放到了 GPU 上，而 %[1]s 会被 DataLoader worker 读取：每个访问它的 worker 都会创建自己的 CUDA context（或在 fork 下失败）",
	"tm007.tensor_dataset": "第 %[1]d 行的 TensorDataset 持有 CUDA 张量，而这个 DataLoader 在 worker 进程中读取它：每个 worker 都会创建自己的 CUDA context（或在 fork 下失败）",
	"tm007.worker":         "%[1]s 在 DataLoader worker 进程中运行并执行 CUDA 操作：每个 worker 都会创建自己的 CUDA context",
	"tm007.collate_lambda": "collate_fn 的 lambda",

	"tm008.data": "%[1]s.data 被赋值为在 autograd 开启时由 %[1]s 计算出的张量：记录下的计算图随即被丢弃，而 autograd 看不到这次更新",

	"tm009.deprecated": "%[1]s 已弃用；请使用 %[2]s",

	"tm010.kept":       "%[1]s 把第 %[2]d 行循环中每个批次的模型输出都保留在设备上",
	"tm010.kept_graph": "%[1]s 把第 %[2]d 行循环中每个批次的模型输出连同其 autograd 计算图都保留在设备上",

	"tm011.multi_process": "多进程作业中调用 %[1]s 时没有 map_location：每个进程都会把 checkpoint 恢复到保存它的那块 GPU 上（通常是 cuda:0），而且是同时进行",
	"tm011.cpu_inference": "CPU 推理路径上调用 %[1]s 时没有 map_location：在 GPU 上保存的张量会被恢复到那块 GPU 上（没有 GPU 时则加载失败）",

	"tm012.retain": "第 %[1]d 行的循环中调用了 backward(retain_graph=True)，之后却没有释放计算图的 backward",

	"tm013.nproc": "num_workers=%[1]d 需要约 %[2]d 个任务，但本机的进程数上限（ulimit -u）是 %[3]d",
	"tm013.shm":   "num_workers=%[1]d 且 prefetch_factor=%[2]d 时，/dev/shm 中同时有 %[3]d 个批次，至少 %[4]s，但本机的 /dev/shm 只有 %[5]s",

	"tm014.set":     "无条件地开启了 autograd 异常检测 (anomaly detection)",
	"tm014.context": "在任何调试条件之外使用了 autograd 异常检测（detect_anomaly）",

	"tm015.appends.forward":  "forward hook 把带 autograd 历史的张量追加到 %[1]s，而它从不清空：每次前向都多保留一个批次及其计算图",
	"tm015.appends.backward": "backward hook 把带 autograd 历史的张量追加到 %[1]s，而它从不清空：每次反向都多保留一个批次及其计算图",
	"tm015.stores_grad":      "backward hook 保存梯度时没有 .detach()：保存的张量、它的计算图和 hook 形成引用环 (reference cycle)，只有循环垃圾回收器才能释放",

	"tm016.fed_back":               "%[1]s 在第 %[3]d 行训练循环的每次迭代中都被回传给 %[2]s，且没有 .detach()：每个批次的计算图都与之前所有批次相连",
	"tm016.fed_back_retained":      "%[1]s 在第 %[3]d 行训练循环的每次迭代中都被回传给 %[2]s，且没有 .detach()：每个批次的计算图都与之前所有批次相连；那里的 retain_graph=True 让它们全部常驻（只去掉它会让 backward 报错）",
	"tm016.fed_back_many":          "%[1]s 在第 %[3]d 行训练循环的每次迭代中都被回传给 %[2]s，且没有 .detach()：每个批次的计算图都与之前所有批次相连",
	"tm016.fed_back_many_retained": "%[1]s 在第 %[3]d 行训练循环的每次迭代中都被回传给 %[2]s，且没有 .detach()：每个批次的计算图都与之前所有批次相连；那里的 retain_graph=True 让它们全部常驻（只去掉它会让 backward 报错）",
	"tm016.module_state":           "%[1]s 由 forward 回传给 %[2]s，并在第 %[3]d 行训练循环的各次迭代间保存在模块上，且没有 .detach()：每个批次的计算图都与之前所有批次相连",
	"tm016.module_state_retained":  "%[1]s 由 forward 回传给 %[2]s，并在第 %[3]d 行训练循环的各次迭代间保存在模块上，且没有 .detach()：每个批次的计算图都与之前所有批次相连；那里的 retain_graph=True 让它们全部常驻（只去掉它会让 backward 报错）",

	"tm017.gc": "%[1]s.%[2]s 中的 gc.collect() 对每个样本都做一次完整的垃圾回收",

	"tm018.handle": "%[1]s 在 __init__ 中打开了 %[2]s 句柄（%[3]s），而 %[1]s 会被 DataLoader worker 读取：每个 worker 都继承同一个句柄",

	"tm019.moved": "%[1]s(...) 在主机内存中创建张量，再由 .%[2]s() 在第 %[3]d 行循环的每次迭代中复制到 GPU",

	"tm020.counter": "每次迭代都对 loss 做反向传播，但优化器只在 %[1]s 时 step（第 %[2]d 行）：多个批次的梯度被累加，而 loss 从未除以批次数",
	"tm020.inner":   "第 %[1]d 行的累积循环中每次迭代都对 loss 做反向传播，之后优化器才 step：%[2]s 个微批次 (micro-batch) 的梯度被累加，而 loss 从未除以它们的数目",

	"version.on":               "（此处为 PyTorch %[1]s，来自 %[2]s）",
	"version.tm001.fix":        "把评估放进 `with torch.no_grad():`，或给函数加上 `@torch.no_grad()` 装饰器；torch.inference_mode 需要 PyTorch 1.9%[1]s",
	"version.tm004.fix":        "每次优化器 step 调用一次 `optimizer.zero_grad(set_to_none=True)`：PyTorch 2.0 之前默认是 set_to_none=False%[1]s",
	"version.tm005.fix_old":    "把它移出循环%[1]s",
	"version.tm005.fix":        "把它移出循环；如果问题是显存碎片 (fragmentation)，设置 PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128（expandable_segments 需要 PyTorch 2.1）%[1]s",
	"version.tm009.fix":        "使用 `torch.amp.autocast(\"cuda\", ...)`；在 PyTorch 2.3 之前保留 `torch.cuda.amp.GradScaler()`，2.3 起才有 `torch.amp.GradScaler(\"cuda\")`%[1]s",
	"version.tm009.warns_from": "%[1]s；从 PyTorch 2.4 起会发出警告%[2]s",

	// The rules (rules.go): summary (why it costs memory) and fix.
	"rule.TM000.summary": "当前 Python 无法解析这个文件，所以没有任何规则能检查它",
	"rule.TM000.fix":     "修正语法错误，或用 --python 指定作业实际使用的解释器",
	"rule.TM001.summary": "模型在 autograd 开启时做评估，每个批次在输出被丢弃之前都保留着激活值的计算图",
	"rule.TM001.fix":     "把评估放进 `with torch.inference_mode():`（或 `torch.no_grad()`），或给函数加上 `@torch.no_grad()` 装饰器",
	"rule.TM002.summary": "在迭代之间累加带 autograd 历史的张量，使每次迭代的计算图都保持存活",
	"rule.TM002.fix":     "累加 Python 数值（`loss.item()`）或分离后的张量（`loss.detach()`）",
	"rule.TM003.summary": "梯度累积 (gradient accumulation) 时没有把 loss 除以步数，或在累积条件之外调用优化器 step",
	"rule.TM003.fix":     "在 backward 之前把 loss 除以累积步数，并且只在 `if (step + 1) %% accum_steps == 0:` 之内调用 optimizer.step()/zero_grad()",
	"rule.TM004.summary": "梯度从不清零，或用 set_to_none=False 清零，这让一整套梯度张量在下一次前向期间一直占着内存",
	"rule.TM004.fix":     "每次优化器 step 调用一次 `optimizer.zero_grad()`（set_to_none=True，PyTorch 2.0 起的默认值）",
	"rule.TM005.summary": "每步都调用 torch.cuda.empty_cache() 会触发同步，并归还下一步还得重新 cudaMalloc 的缓存块；它释放不出任何作业能用的显存",
	"rule.TM005.fix":     "把它移出循环；如果问题是显存碎片，设置 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
	"rule.TM006.summary": "Dataset 保存了按样本的 Python 列表/字典，并被 DataLoader worker 读取：引用计数会写到每个对象，于是每个 worker 逐渐复制整个结构（读时复制 (copy-on-read)）",
	"rule.TM006.fix":     "把样本存进 numpy 数组（定长字符串的 np.array，或指向同一 bytes 缓冲区的偏移量），或内存映射文件，而不是 Python 对象的列表",
	"rule.TM007.summary": "在 DataLoader worker 中运行的 Dataset.__getitem__ 或 collate_fn 里做 CUDA 操作：每个 worker 都会创建自己的 CUDA context（每个占数百 MiB 显存），或在 fork 下失败",
	"rule.TM007.fix":     "让 dataset 和 collate_fn 返回 CPU 张量；在训练循环中再把批次移到 GPU（`pin_memory=True` + `.to(device, non_blocking=True)`）",
	"rule.TM008.summary": "在 autograd 开启时，把由同一张量计算出的结果赋给 `.data`，会记录一个计算图（及其保存的张量）然后立即丢弃，并且对 autograd 隐藏了这次更新；它不会形成引用环（引用计数会立刻释放临时对象），所以代价是暂时的",
	"rule.TM008.fix":     "在 `torch.no_grad()` 下原地更新（`with torch.no_grad(): p.copy_(new)`），或赋一个分离后的值",
	"rule.TM009.summary": "torch.cuda.amp.autocast / GradScaler 已弃用（PyTorch 2.4 起发出 FutureWarning）",
	"rule.TM009.fix":     "使用 `torch.amp.autocast(\"cuda\", ...)` 和 `torch.amp.GradScaler(\"cuda\")`",
	"rule.TM010.summary": "每个批次的模型输出（logits、隐藏状态、注意力图）都被保存在 GPU 上的列表中",
	"rule.TM010.fix":     "追加 `out.detach().cpu()`（或只保留需要的归约值），而不是 GPU 张量",
	"rule.TM011.summary": "在多进程作业或 CPU 推理路径上，不带 map_location 的 torch.load 会把每个张量恢复到保存时所在的设备：每个 rank 同时把保存它的那块 GPU 填满",
	"rule.TM011.fix":     "传入 `map_location=\"cpu\"`（再移动需要的部分），或目标设备",
	"rule.TM012.summary": "循环中的 backward(retain_graph=True) 让整个计算图保存的激活值在 backward 之后依然存活",
	"rule.TM012.fix":     "去掉 retain_graph=True，或把多个 loss 相加后只调用一次 backward；只在需要对同一计算图做第二次 backward 时保留它",
	"rule.TM013.summary": "num_workers 超过了本机的进程数上限（ulimit -u）或 /dev/shm 的容量",
	"rule.TM013.fix":     "调低 num_workers，或提高上限（`ulimit -u`、`--shm-size` / 更大的 /dev/shm）",
	"rule.TM014.summary": "autograd 异常检测 (anomaly detection) 会为每个计算图节点记录 Python 调用栈，并检查每次 backward：内存和时间随计算图规模增长",
	"rule.TM014.fix":     "只在调试时（由开关控制）开启，绝不要在正式训练中开启",
	"rule.TM015.summary": "模块 hook 连同 autograd 计算图一起保存了输出或梯度：forward hook 追加到从不清空的列表会保留每个批次的激活值；backward hook 保存 grad_output 会形成引用环",
	"rule.TM015.fix":     "保存 `output.detach()`（长期保留时再加 `.cpu()`），并在每个批次之后清空列表",
	"rule.TM016.summary": "循环神经网络的隐藏状态在训练迭代之间被回传而没有 .detach()：每个批次的计算图都与之前所有批次相连（有 retain_graph=True 时内存每个批次都在增长；没有时第二次 backward 会失败）",
	"rule.TM016.fix":     "在批次之间分离状态：`hidden = hidden.detach()`（LSTM 的 (h, c)：`hidden = tuple(h.detach() for h in hidden)`），或每个批次重新初始化；然后去掉 retain_graph=True",
	"rule.TM017.summary": "Dataset.__getitem__ 中的 gc.collect() 对每个样本都做一次完整回收：它释放不出引用计数释放不了的东西，却让数据加载慢上几个数量级，于是人们调高 num_workers（和内存）来弥补",
	"rule.TM017.fix":     "删除它；如果 worker 内存在增长，找出占用者（按样本的 Python 对象：TM006），或在 worker_init_fn 中 / 训练循环中每 N 个批次回收一次",
	"rule.TM018.summary": "在 Dataset.__init__ 中打开的 HDF5/LMDB 句柄会被每个 fork 出的 DataLoader worker 继承：h5py 和 LMDB 句柄不是 fork 安全的（读到损坏数据、崩溃），在 spawn 下又无法 pickle",
	"rule.TM018.fix":     "在 __init__ 中只保存路径，在 worker 中延迟打开文件：在 __getitem__ 开头写 `if self.db is None: self.db = h5py.File(self.path, \"r\")`（或放在 worker_init_fn 中）",
	"rule.TM019.summary": "张量先在主机内存中创建，随即复制到 GPU（torch.randn(...).cuda()）：每次执行都多一次主机分配和一次同步复制",
	"rule.TM019.fix":     "直接在设备上创建：`torch.randn(..., device=device)`（或用 `torch.zeros_like(x)` 跟随已有张量）",
	"rule.TM020.summary": "循环对每个批次做反向传播，但每 N 个批次才 step 一次优化器（计数器，或 TM003 读不懂的取模），却没有把 loss 除以 N：累加的梯度大了 N 倍",
	"rule.TM020.fix":     "在 backward 之前把 loss 除以累积的批次数（`(loss / accum_steps).backward()`）",
}
