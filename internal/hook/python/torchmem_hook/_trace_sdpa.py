"""torch.nn.functional.scaled_dot_product_attention on the meta device as
the traced GPU's CUDA kernel allocates it (torchmem estimate --trace).

On meta, SDPA takes the math backend (ATen's _fused_sdp_choice has no meta
kernel), which materialises b*h*s*s scores, softmax and dropout mask. On a
CUDA GPU, select_sdp_backend (aten/src/ATen/native/transformers/cuda/
sdp_utils.cpp) tries flash attention, then memory-efficient attention, then
math, and the first whose checks pass runs. This module makes the same
choice for the GPU being traced (its compute capability from
TORCHMEM_TRACE_GPU_CC, default sm90 as torch.cuda answers under the tracer)
and calls the chosen fused op, whose meta kernel (torch/_meta_registrations.py)
returns the outputs the CUDA kernel returns: for flash, the output and an
fp32 log-sum-exp of b*h*s_q (flash_api.cpp mha_fwd); for memory-efficient,
the output and an fp32 log-sum-exp of b*h*ceil32(s_q). Autograd saves them
as on the GPU. The backward kernels' scratch memory, which no meta kernel
shows, is added around the backward op (workspace()).

Only torch >= 2.0 has these ops; on 1.13 install() returns None.
"""

from torchmem_hook import _common

ENV_GPU_CC = "TORCHMEM_TRACE_GPU_CC"
DEFAULT_CC = 90

# The philox seed and offset the fused ops return are 0-dim int64 tensors
# that torch 2.6's CUDA kernels make on the host (flash_api.cpp mha_fwd:
# at::scalar_tensor(..., at::dtype(at::kLong)), no device); the meta kernels
# return them on meta. Record marks such outputs of these ops host. From
# torch 2.7 flash returns a uint64 rng state of 2 and an unused uint64
# scalar instead, both made on the GPU ("[Note] BC breaking change to flash
# seed/offset"; the meta kernel returns the same dtypes): host_scalar tells
# them apart by dtype.
HOST_SCALAR_OPS = frozenset([
    "aten._scaled_dot_product_flash_attention.default",
    "aten._scaled_dot_product_efficient_attention.default",
])


def host_scalar(torch, t):
    """Whether an output of a HOST_SCALAR_OPS op is one the CUDA kernel
    makes on the host: the int64 0-dim seed and offset (not 2.7's uint64)."""
    return t.dim() == 0 and t.dtype == torch.int64


FLASH_BWD = "aten._scaled_dot_product_flash_attention_backward.default"
EFFICIENT_BWD = "aten._scaled_dot_product_efficient_attention_backward.default"

# Alignments and limits from sdp_utils.cpp.
FLASH_MAX_HEAD_DIM = 256  # check_head_dim_size_flash
FLASH_PAD_HEAD_DIM = 8  # attention.cpp pads q, k, v's last dim to 8 for flash
MEM_EFF_BIAS_ALIGN = 16  # attention.cpp preprocess_mask: pad_bias<16>
LSE_ALIGN_MEM_EFF = 32  # kAlignLSE (meta__scaled_dot_product_efficient_attention)
FA2_SEQ_ROUND = 128  # flash_api.cpp mha_bwd: seqlen_q_rounded


def _round(x, m):
    return (x + m - 1) // m * m


def _cc():
    import os

    try:
        cc = int(os.environ.get(ENV_GPU_CC) or 0)
    except ValueError:
        cc = 0
    return cc if cc > 0 else DEFAULT_CC


def _max_cc(torch):
    # torch 2.7 widened both kernels' range from [sm80|sm50, sm90] to sm120
    # (Blackwell); the range is that of the torch being traced.
    return 121 if _common.torch_version(torch) >= (2, 7) else 90


class Params(object):
    """sdp_params: what select_sdp_backend looks at."""

    def __init__(self, q, k, v, mask, dropout, causal, gqa, grad):
        self.q, self.k, self.v = q, k, v
        self.mask, self.dropout, self.causal, self.gqa = mask, dropout, causal, gqa
        self.grad = grad  # an input requires grad and grad mode is on


def heads_ok(p, gqa_supported):
    """check_batch_size_and_num_heads_dense: equal batch, equal heads, or
    (enable_gqa, where the backend supports it) q heads a multiple of kv heads."""
    q, k, v = p.q, p.k, p.v
    if not (q.size(0) == k.size(0) == v.size(0)) or k.size(1) != v.size(1):
        return False
    if q.size(1) == k.size(1):
        return True
    return gqa_supported and p.gqa and q.size(1) % k.size(1) == 0


def common_ok(p):
    # check_tensor_shapes: 4-d dense inputs; check_nonzero_sequence_lengths
    if any(t.dim() != 4 or t.is_nested for t in (p.q, p.k, p.v)):
        return False
    return p.q.size(2) > 0 and p.k.size(2) > 0


def can_flash(torch, p, cc):
    """can_use_flash_attention (sdp_utils.cpp)."""
    q, k, v = p.q, p.k, p.v
    if not torch.backends.cuda.flash_sdp_enabled() or not common_ok(p):
        return False
    if p.mask is not None:  # check_for_attn_mask
        return False
    d = q.size(-1)
    if not (d == k.size(-1) == v.size(-1)) or d > FLASH_MAX_HEAD_DIM:  # check_head_dim_size_flash
        return False
    if not 80 <= cc <= _max_cc(torch):  # check_flash_attention_hardware_support
        return False
    # check_requires_grad_and_head_dim_gt192_constraints_on_sm86_89(_or_120)
    if p.grad and (86 <= cc <= 89 or 120 <= cc <= 121):
        if not (d <= 192 or (p.dropout == 0 and d > 224)):
            return False
    if p.causal and q.size(2) != k.size(2):  # check_flash_causal_non_square_seqlens
        return False
    if q.dtype not in (torch.float16, torch.bfloat16) or k.dtype != q.dtype or v.dtype != q.dtype:
        return False  # check_dtypes_low_precision (sm80+: fp16, bf16)
    if not heads_ok(p, True):  # flash supports GQA (torch >= 2.5)
        return False
    # check_last_dim_stride_equals_1_dense<ignore_singleton_dim=true>
    return all(t.stride(-1) == 1 or t.size(-1) == 1 for t in (q, k, v))


def gemm_alignment(torch, q, cc):
    """minimum_gemm_alignment: elements q, k, v's last dim and storage
    offsets must be multiples of for the CUTLASS kernels."""
    half = q.dtype in (torch.float16, torch.bfloat16)
    tensor_cores = cc >= 80 or (cc >= 70 and half)
    mn = 4 if cc >= 80 else 1
    if tensor_cores:
        mn = max(mn, 128 // (16 if half else 32))
    return mn


def can_efficient(torch, p, cc):
    """can_use_mem_efficient_attention (sdp_utils.cpp)."""
    q, k, v = p.q, p.k, p.v
    if not torch.backends.cuda.mem_efficient_sdp_enabled() or not common_ok(p):
        return False
    if not 50 <= cc <= _max_cc(torch):  # check_mem_efficient_hardware_support
        return False
    a = gemm_alignment(torch, q, cc)
    if q.size(-1) != k.size(-1) or q.size(-1) % a or v.size(-1) % a:  # check_head_dim_size_mem_efficient
        return False
    if cc >= 80 and any(t.storage_offset() % a for t in (q, k, v)):  # check_data_ptr_alignment_mem_efficient
        return False
    dtypes = (torch.float16, torch.float32, torch.bfloat16) if cc >= 80 else (torch.float16, torch.float32)
    if q.dtype not in dtypes or k.dtype != q.dtype or v.dtype != q.dtype:
        return False
    # GQA: torch 2.5/2.6 give the efficient kernel no grouped-query support
    # (check_batch_size_and_num_heads_dense<false>); later versions do.
    if not heads_ok(p, _common.torch_version(torch) >= (2, 7)):
        return False
    # check_last_dim_stride_equals_1_dense<ignore_singleton_dim=false>
    return all(t.stride(-1) == 1 for t in (q, k, v))


def select(torch, p, cc):
    """select_sdp_backend's default order: flash, efficient, math. (cuDNN
    attention comes first only in newer torch with cuDNN > 9.15 on sm90/
    sm100, check_prefer_cudnn_attention; 2.6 lists it last.)"""
    if can_flash(torch, p, cc):
        return "flash"
    if can_efficient(torch, p, cc):
        return "efficient"
    return "math"


def install(torch, T):
    """The handler of F.scaled_dot_product_attention, or None where there is
    nothing to emulate (torch 1.x, cpu mode)."""
    F = torch.nn.functional
    func = getattr(F, "scaled_dot_product_attention", None)
    if func is None or T.device != "meta" or not hasattr(torch.ops.aten, "_scaled_dot_product_flash_attention"):
        return None
    return _SDPA(torch, T, func, _cc())


class _SDPA(object):
    def __init__(self, torch, T, func, cc):
        self.torch, self.T, self.func, self.cc = torch, T, func, cc
        self.chosen = {}  # backend -> calls, for tests and debugging

    def call(self, args, kwargs):
        """The output as the CUDA kernel makes it, or NotImplemented: let
        the math backend run (as it does on the GPU)."""
        torch = self.torch
        names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
        a = dict(zip(names, args))
        a.update(kwargs)
        q, k, v = a.get("query"), a.get("key"), a.get("value")
        if not all(isinstance(t, torch.Tensor) and self._on_device(t) for t in (q, k, v)) or \
                len(set(type(t) for t in (q, k, v))) > 1:
            return NotImplemented
        mask = a.get("attn_mask")
        if mask is not None and not (isinstance(mask, torch.Tensor) and mask.is_meta):
            return NotImplemented
        grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
        p = Params(q, k, v, mask, float(a.get("dropout_p") or 0.0), bool(a.get("is_causal")),
                   bool(a.get("enable_gqa")), grad)
        backend = select(torch, p, self.cc)
        self.chosen[backend] = self.chosen.get(backend, 0) + 1
        prev = self.T.failure
        try:
            if backend == "flash":
                return self.flash(p, a.get("scale"))
            if backend == "efficient":
                return self.efficient(p, a.get("scale"))
        except (TypeError, RuntimeError, NotImplementedError):
            # torch 2.0: no scale argument, no meta kernel for the op
            self.chosen["failed"] = self.chosen.get("failed", 0) + 1
            self.T.failure = prev  # the math backend runs instead: not the program's failure
        return NotImplemented

    def _on_device(self, t):
        # a DTensor's shard (tensor parallelism: the heads split over the
        # ranks) is the device tensor: the fused kernel runs through
        # DTensor's own sharding rules, as on the GPU (the math backend a
        # meta tensor would take mixes the causal mask, a plain tensor,
        # with DTensors, which DTensor refuses)
        local = _common.local_shard(t)
        return local.is_meta and self.T.is_device_storage(local)

    def flash(self, p, scale):
        # attention.cpp scaled_dot_product_attention, flash_attention case:
        # pad_last_dim<8> (a copy when the head dim is not a multiple of 8),
        # the scale of the original head dim, the output sliced back.
        torch = self.torch
        d = p.q.size(-1)
        pad = _round(d, FLASH_PAD_HEAD_DIM) - d
        q, k, v = p.q, p.k, p.v
        if pad:
            q, k, v = (torch.nn.functional.pad(t, (0, pad)) for t in (q, k, v))
        if scale is None:
            scale = 1.0 / (d ** 0.5)
        out = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, p.dropout, p.causal, False, scale=scale)[0]
        return out[..., :d] if pad else out

    def efficient(self, p, scale):
        # attention.cpp, efficient_attention case: a boolean mask becomes a
        # float one in q's dtype (convert_boolean_attn_mask), then
        # preprocess_mask pads its last dim to 16 (pad_bias) and expands it.
        torch = self.torch
        q, k, v, mask = p.q, p.k, p.v, p.mask
        if mask is not None:
            if mask.dtype == torch.bool:
                mask = torch.zeros(mask.shape, dtype=q.dtype, device=mask.device)
            last = mask.size(-1)
            pad = _round(last, MEM_EFF_BIAS_ALIGN) - last
            if pad:
                mask = torch.nn.functional.pad(mask, (0, pad))[..., :last]
            mask = mask.expand(q.size(0), q.size(1), q.size(2), k.size(2))
        return torch.ops.aten._scaled_dot_product_efficient_attention(
            q, k, v, mask, p.grad, p.dropout, p.causal, scale=scale)[0]


def workspace(torch, op, args):
    """The scratch tensors a fused attention backward takes from the caching
    allocator for its call (freed when it returns), which the meta kernels
    do not make: FlashAttention-2's mha_bwd (flash_api.cpp) makes softmax_d
    (b, h, s_q rounded to 128) and dq_accum (b, s_q rounded to 128, h,
    head dim rounded to 32, or 64 above 128), both fp32, and, for grouped
    queries, dk and dv at the full head count before summing them. The
    memory-efficient backward's accumulators are taken as the same size:
    what internal/estimate's attentionBackwardWorkspace assumes for both."""
    if op not in (FLASH_BWD, EFFICIENT_BWD) or len(args) < 4:
        return []
    q, k = args[1], args[2]
    b, h, s, d = (int(x) for x in q.shape)
    sr = _round(s, FA2_SEQ_ROUND)
    hd = _round(_round(d, 8), 32 if d <= 128 else 64)
    f32 = dict(dtype=torch.float32, device=q.device)
    ws = [torch.empty((b, h, sr), **f32), torch.empty((b, sr, h, hd), **f32)]
    if op == FLASH_BWD and int(k.shape[1]) != h:
        sk = int(k.shape[2])
        ws += [torch.empty((b, sk, h, d), dtype=q.dtype, device=q.device) for _ in range(2)]
    return ws


def packed_grads(torch, op, args, out):
    """The memory-efficient backward makes one (B, M, 3, H, K) chunk for
    the gradients of q, k and v when they are views of one storage (a
    fused qkv projection), or one (B, N, 2, H, Kv) for k and v
    (attention_backward.cu _efficient_attention_backward): one allocation
    where the meta kernel makes three. Returns the outputs re-made so."""
    if op != EFFICIENT_BWD or len(args) < 4:
        return out
    _, q, k, v = args[:4]
    gq, gk, gv = out[0], out[1], out[2]
    if gq is None or gk is None or gv is None:
        return out
    same = lambda a, b: a.untyped_storage()._cdata == b.untyped_storage()._cdata
    B, H, M, K = (int(x) for x in q.shape)
    N, Hk, Kv = int(k.shape[2]), int(k.shape[1]), int(v.shape[3])
    if M == N and K == Kv and H == Hk and same(q, k) and same(q, v):
        chunk = torch.empty((B, M, 3, H, K), dtype=q.dtype, device=q.device)
        g = [chunk.select(2, i).transpose(1, 2) for i in range(3)]
        return (g[0], g[1], g[2]) + tuple(out[3:])
    if int(k.shape[3]) == Kv and same(k, v):
        chunk = torch.empty((B, N, 2, Hk, Kv), dtype=k.dtype, device=k.device)
        return (gq, chunk.select(2, 0).transpose(1, 2), chunk.select(2, 1).transpose(1, 2)) + tuple(out[3:])
    return out
