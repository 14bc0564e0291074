package cli

import (
	"github.com/torchmem/torchmem/internal/i18n"
	"golang.org/x/text/language"
)

// estimateZH is the Simplified Chinese text of `torchmem estimate`, with
// the ids of estimateEN. Code names (torch.cuda.*, nvidia-smi, flags,
// LoRA, ZeRO, dtypes) stay as they are written in the code.
var estimateZH = map[string]string{
	"estimate.header":            "%[1]s（%[2]s，%[3]s 参数）",
	"estimate.sep":               "，",
	"estimate.setup.batchSeq":    "批大小 %[1]s × 序列 %[2]s",
	"estimate.setup.batchImage":  "批大小 %[1]s × %[2]s 像素",
	"estimate.setup.inference":   "推理",
	"estimate.setup.generating":  "推理，生成 %[1]s 个 token",
	"estimate.setup.kvCache":     "推理（带 KV 缓存）",
	"estimate.setup.optimizer":   "%[1]s（%[2]s）",
	"estimate.setup.accum":       "梯度累积 %[1]s",
	"estimate.setup.ckpt":        "激活检查点",
	"estimate.setup.ckptNonReen": "激活检查点（use_reentrant=False）",
	"estimate.setup.zero":        "ZeRO-%[1]s，%[2]s 张 GPU",
	"estimate.setup.ddp":         "DDP",
	"estimate.setup.ddpView":     "DDP（梯度为 bucket 视图）",
	"estimate.setup.attention":   "%[1]s 注意力",
	"estimate.setup.lora":        "LoRA r=%[1]s alpha=%[2]s",
	"estimate.setup.qlora":       "QLoRA r=%[1]s alpha=%[2]s",
	"estimate.setup.targets":     "作用于 %[1]s",
	"estimate.setup.loraDropout": "lora_dropout %[1]s",
	"estimate.setup.saved":       "modules_to_save %[1]s",
	"estimate.setup.noKbitPrep":  "未调用 prepare_model_for_kbit_training",
	"estimate.setup.quant":       "%[1]s 量化权重",
	"estimate.setup.kvDType":     "KV 缓存为 %[1]s",

	"estimate.row.peakAllocated":  "峰值已分配",
	"estimate.row.peakReserved":   "峰值已保留",
	"estimate.row.process":        "进程",
	"estimate.row.perBlock":       "每个块的激活",
	"estimate.row.trainable":      "可训练参数",
	"estimate.note.peakAllocated": "torch.cuda.max_memory_allocated()",
	"estimate.note.peakReserved":  "torch.cuda.max_memory_reserved()",
	"estimate.note.process":       "nvidia-smi（已保留 + 上下文 + 库）",
	"estimate.note.perBlock":      "一个块为反向传播保留",
	"estimate.note.trainable":     "占 %[2]s 的 %[1]s%%（print_trainable_parameters）",
	"estimate.peakAt":             "峰值出现在",
	"estimate.breakdown":          "峰值时的构成：",

	"estimate.phase.forward":       "第 %[1]s 步前向",
	"estimate.phase.forwardPass":   "第 %[1]s 次前向",
	"estimate.phase.backward":      "第 %[1]s 步反向",
	"estimate.phase.endForward":    "第 %[1]s 步前向末尾（输出头与损失）",
	"estimate.phase.startBackward": "第 %[1]s 步反向开始（损失的梯度）",
	"estimate.phase.optimizer":     "第 %[1]s 步优化器更新",
	"estimate.phase.zeroGrad":      "第 %[1]s 步 zero_grad",
	"estimate.phase.logits":        "第 %[1]s 次 logits",
	"estimate.phase.generation":    "第 %[1]s 次生成",
	"estimate.phase.load":          "加载模型",
	"estimate.phase.block":         "%[1]s，第 %[2]s/%[3]s 块",
	"estimate.phase.states":        "%[1]s（创建状态）",

	"estimate.cat.weights":                           "权重",
	"estimate.cat.gradients":                         "梯度",
	"estimate.cat.optimizer_states":                  "优化器状态",
	"estimate.cat.optimizer_temporaries":             "优化器临时张量",
	"estimate.cat.activations":                       "激活",
	"estimate.cat.autocast_weight_copies":            "autocast 权重副本",
	"estimate.cat.logits_and_loss":                   "logits 与损失",
	"estimate.cat.kv_cache":                          "KV 缓存",
	"estimate.cat.cublas_workspace":                  "cuBLAS 工作区",
	"estimate.cat.input_data":                        "输入数据",
	"estimate.cat.adapter_weights":                   "适配器权重",
	"estimate.cat.quantization_constants":            "量化常数",
	"estimate.cat.dequantized_weight_temporaries":    "反量化权重临时张量",
	"estimate.cat.paged_optimizer_states":            "分页优化器状态（托管内存）",
	"estimate.cat.allocator_cache_and_fragmentation": "分配器缓存与碎片",
	"estimate.cat.cuda_context":                      "CUDA 上下文",
	"estimate.cat.cuda_libraries":                    "CUDA 库",

	"estimate.fit.gpu":            "GPU %[1]s：%[2]s，预留 %[4]s%% 余量后预算 %[3]s",
	"estimate.fit.fits":           "放得下，剩余 %[1]s",
	"estimate.fit.over":           "放不下：超出 %[1]s",
	"estimate.fit.oom":            "放不下：超出 %[1]s；即使分配器释放缓存\n仍会 CUDA 显存不足",
	"estimate.fit.note":           "注：",
	"estimate.note.cacheReleases": "缓存分配器达到预算后释放缓存继续运行（%[1]s 次）：保留显存随作业增长（生成时 KV cache 每个 token 由 torch.cat 重新创建），直到 GPU 用满，PyTorch 再释放未使用的段并重试",
	"estimate.note.batchIsland":   "batch %[1]s 单独能放下，但 batch %[2]s 放不下：离预算这么近时由分配器的碎片决定，因此按放不下计算",
	"estimate.notice.cachedFree":  "torchmem: 提示：保留显存中有 %[1]s 是结束时没有张量使用的缓存：没有 GPU 时分配器按无上限处理；在真实 GPU 上，cudaMalloc 失败时 PyTorch 会释放这部分缓存并继续（用 --gpu 或 --gpu-memory 得到那时的数字）",
	"estimate.fit.maxBatch":       "能放下的最大批大小：%[1]s",
	"estimate.fit.maxBatchLimit":  "能放下的最大批大小：%[1]s 或更大（搜索到此为止）",
	"estimate.fit.maxBatchNone":   "能放下的最大批大小：无（批大小 1 也放不下）",
	"estimate.levers":             "可节省显存的手段（按节省量排序）：",
	"estimate.levers.fits":        "放得下",
}

// estimateCatalog renders `torchmem estimate`'s human output.
var estimateCatalog = i18n.NewCatalog("estimate", map[language.Tag]map[string]string{
	i18n.EN: estimateEN,
	i18n.ZH: estimateZH,
})
