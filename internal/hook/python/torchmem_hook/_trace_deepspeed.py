"""torchmem estimate --trace of a DeepSpeed job: DeepSpeed's own engine
(ZeRO stages 0 to 3, its optimizers, its buckets) run on the trace's
tensors as rank 0 of the fake process group (_trace_dist.py; the
deepspeed launcher is read there).

What DeepSpeed needs from the tracer besides what any script does:

  - its compiled ops. OpBuilder.load() builds a CUDA extension with ninja
    and nvcc (or imports a prebuilt one), whose kernels cannot run on meta
    tensors. The optimizers' kernels (FusedAdam's multi_tensor_adam,
    DeepSpeedCPUAdam's adam_update, Lion, Lamb, Adagrad) update the
    tensors they are given in place and allocate nothing from the caching
    allocator worth counting, so they are replaced by functions that do
    nothing: the memory is the GPU's, the values are not (meta tensors
    have none). Any other op (ZeRO++'s quantizer, NVMe's async I/O, the
    inference kernels) stops the trace, naming it.
  - the names of its buffers. ZeRO keeps the weights in flat half-precision
    buffers, the fp32 master weights beside the optimizer's states, and the
    gradients in flat partitions and reduce buckets (reduce_bucket_size
    elements, 5e8 by default: 954 MiB in bf16 on every rank). Its
    optimizer's attributes name them; after initialize, each backward and
    each step they are counted as weights, optimizer states or gradients
    (zero_kind), not as the temporaries or input data their call sites
    would make them.
  - ZeRO-3 and a model not built under deepspeed.zero.Init: the engine
    moves it to the GPU whole before it partitions it, so every GPU holds
    all the weights at setup (a 70B model does not get past it). The trace
    has that peak; a W line says why (unpartitioned).
  - the device's name. DeepSpeed makes tensors on
    current_device_name() and, in GatheredParameters(modifier_rank=...)
    (transformers' weight loading under ZeRO-3), checks that the gathered
    weights are on torch.device(current_device_name()). In meta mode it
    answers the device tensors' own device (T.device_marker).
  - CPU offload (offload_optimizer, offload_param to "cpu"): while the
    engine runs, what DeepSpeed makes on the host (device="cpu", or copied
    there) is a host placeholder without data that answers .device as the
    host, as FSDP1's offload is (_trace_dist.py): rank 0's fp32 partitions
    and Adam's states for a 70B model over 8 GPUs would otherwise take
    105 GB of this process's RAM.
  - ZeRO-3's defragment() copies every partition to a host buffer and back
    into one flat device buffer: on meta tensors that host buffer would be
    rank 0's whole partition in this process's RAM (17.5 GB in bf16 for a
    70B model over 8 GPUs) filled with placeholder zeros. In meta mode the
    device side alone is done, as DeepSpeed does it: the partitions freed,
    then the flat buffer made, each partition a view of it.

Nothing here may raise into the program; of the hook it imports only
_common.
"""

import contextlib

from torchmem_hook import _common

_debug = _common.debug

# The modules whose OpBuilder class loads the ops: a pip install has the
# first; a source checkout on PYTHONPATH has the second too (a symlink).
_BUILDER_MODULES = ("deepspeed.ops.op_builder.builder", "op_builder.builder")
_ENGINE_MODULE = "deepspeed.runtime.engine"
# defragment's module and the one that imports it by name.
_DEFRAGMENT_MODULES = ("deepspeed.runtime.zero.utils", "deepspeed.runtime.zero.stage3")
_CUDA_ACCELERATOR = "deepspeed.accelerator.cuda_accelerator"

# The ops replaced, by OpBuilder name: the functions of each and what each
# returns (fused_lamb's lamb returns the trust ratio it applied, a float).
_OPS = {
    "fused_adam": {"multi_tensor_adam": None},
    "fused_lion": {"multi_tensor_lion": None},
    "fused_lamb": {"lamb": 1.0},
    "cpu_adam": {"create_adam": 0, "adam_update": None, "adam_rollback": None, "destroy_adam": 0},
    "cpu_adagrad": {"create_adagrad": 0, "adagrad_update": None, "destroy_adagrad": 0},
    "cpu_lion": {"create_lion": 0, "lion_update": None, "destroy_lion": 0},
}

# How deep zero_tensors looks into the ZeRO optimizer's attributes (a list
# of groups of tensors, a dict of buckets with a buffer: 3 levels).
_MAX_DEPTH = 4


class _Op(object):
    """A DeepSpeed op module whose kernels do nothing (see the docstring)."""

    def __init__(self, name, functions):
        self.__name__ = "torchmem_trace_" + name
        for fn, ret in functions.items():
            setattr(self, fn, _returning(ret))


def _returning(v):
    return lambda *a, **k: v


def op_for(name):
    """The replacement of DeepSpeed op name, or raises RuntimeError saying
    that the op is not traced."""
    functions = _OPS.get(name)
    if functions is None:
        raise RuntimeError("DeepSpeed op %s is a compiled CUDA extension that torchmem estimate --trace cannot "
                           "run on tensors without data; only the optimizers' ops (%s) are traced"
                           % (name, ", ".join(sorted(_OPS))))
    return _Op(name, functions)


def zero_kind(path):
    """What the tensor at attribute path (of a ZeRO optimizer: "ipg_buffer",
    "fp32_partitioned_groups_flat", "ipg_buckets.buffer") counts as:
    "grad", "optstate" (fp32 master weights, as the built-in estimate
    counts them), "param", or "" for none of these. Gradients first: a
    gradient buffer's name often says fp32 too."""
    p = path.lower()
    if "grad" in p or "ipg" in p:
        return "grad"
    if "fp32" in p or "master" in p:
        return "optstate"
    if "fp16" in p or "bf16" in p or "bit16" in p or "param" in p or "groups_flat" in p:
        return "param"
    return ""


def zero_tensors(torch, opt):
    """(path, tensor) for the tensors a ZeRO optimizer holds in its
    attributes, lists, dicts and bucket objects, not inside its inner
    torch optimizer (whose states the step hooks count) or a module."""
    out = []
    seen = set()

    def walk(path, v, depth):
        if id(v) in seen or depth > _MAX_DEPTH:
            return
        seen.add(id(v))
        if isinstance(v, torch.Tensor):
            out.append((path, v))
            ds = getattr(v, "ds_tensor", None)  # ZeRO-3: the parameter's own partition
            if isinstance(ds, torch.Tensor):
                out.append(("param.ds_tensor", ds))
            return
        if isinstance(v, (torch.optim.Optimizer, torch.nn.Module)):
            return
        if isinstance(v, (list, tuple)):
            for x in v:
                walk(path, x, depth + 1)
        elif isinstance(v, dict):
            for x in v.values():
                walk(path, x, depth + 1)
        elif depth > 0 and hasattr(v, "__dict__") and type(v).__module__.startswith("deepspeed"):
            for k, x in list(vars(v).items()):
                walk(path + "." + k, x, depth + 1)

    for k, v in list(vars(opt).items()):
        walk(k, v, 0)
    return out


def classify(torch, T, engine):
    """Count the ZeRO optimizer's buffers as what they are (zero_kind)."""
    opt = getattr(engine, "optimizer", None)
    if opt is None or isinstance(opt, torch.optim.Optimizer) and not _is_zero(opt):
        return
    host = 0
    for path, t in zero_tensors(torch, opt):
        kind = zero_kind(path)
        if kind:
            T.classify(t, kind, final=True)
        if path == "param.ds_tensor" and T.is_host(t):
            host += t.numel()  # offload_param: rank 0's partition on the host
    told = getattr(engine, "_torchmem_host_params", 0)
    if host > told:
        T.offloaded_params(host - told)
        engine._torchmem_host_params = host


def _is_zero(opt):
    return type(opt).__module__.startswith("deepspeed.runtime")


def stage(engine):
    """The ZeRO stage of engine's configuration (0 without ZeRO)."""
    try:
        return int(engine.zero_optimization_stage())
    except Exception:
        return 0


def install(torch, T):
    """Patch DeepSpeed's op loading and engine when DeepSpeed is imported
    (or now, if it already is)."""
    def on_builder(mod):
        _patch_builder(mod)

    def on_engine(mod):
        _patch_engine(torch, T, mod)

    def on_defragment(mod):
        if T.device == "meta" and hasattr(mod, "defragment"):
            mod.defragment = _defragment(torch)

    def on_accelerator(mod):
        cls = getattr(mod, "CUDA_Accelerator", None)
        if T.device == "meta" and cls is not None:
            # the device tensors' own device (meta), which DeepSpeed
            # compares theirs with (GatheredParameters' broadcast check)
            # and makes tensors on, as on the GPU
            cls.current_device_name = lambda self: T.device_marker

    hooks = dict((m, on_builder) for m in _BUILDER_MODULES)
    hooks[_ENGINE_MODULE] = on_engine
    hooks[_CUDA_ACCELERATOR] = on_accelerator
    for m in _DEFRAGMENT_MODULES:
        hooks[m] = on_defragment
    _common.after_import(hooks)


def _defragment(torch):
    """ZeRO-3's defragment(tensors) without its host round trip (see the
    docstring): the same flat device buffer, returned, and the same views."""

    def defragment(tensors):
        sizes = [t.numel() for t in tensors]
        dtype, device = tensors[0].dtype, tensors[0].device
        for t in tensors:
            t.data = torch.empty(0, dtype=dtype, device=device)
        torch.cuda.empty_cache()  # as DeepSpeed's does, before the flat buffer
        buf = torch.empty(sum(sizes), dtype=dtype, device=device)
        offset = 0
        for t, n in zip(tensors, sizes):
            t.data = buf.narrow(0, offset, n)
            offset += n
        return buf

    return defragment


# Why a ZeRO-3 job's setup holds the whole model on every GPU (the report
# says it where deepspeed.initialize was called).
ZERO_INIT_NOTE = ("ZeRO-3 moves a model not built under deepspeed.zero.Init to the GPU whole before it "
                  "partitions it")


def unpartitioned(torch, config, model):
    """Whether ZeRO-3's engine will move model to the GPU whole before it
    partitions it (DeepSpeedEngine._configure_distributed_model): stage 3,
    and a model not built under deepspeed.zero.Init (no parameter has a
    ds_id), as when the Trainer's TrainingArguments(deepspeed=...) are made
    after from_pretrained."""
    try:
        if int(getattr(config, "zero_optimization_stage", 0) or 0) < 3 or not isinstance(model, torch.nn.Module):
            return False
        params = list(model.parameters())
        return bool(params) and not any(hasattr(p, "ds_id") for p in params)
    except Exception:
        return False


def offloads(config):
    """Whether a DeepSpeedConfig offloads the optimizer or the parameters
    to the CPU."""
    z = getattr(config, "zero_config", None)
    for o in (getattr(z, "offload_optimizer", None), getattr(z, "offload_param", None)):
        d = getattr(o, "device", None)
        if getattr(d, "value", d) == "cpu":
            return True
    return False


@contextlib.contextmanager
def _offloading(T, on):
    """While DeepSpeed offloads (on), in meta mode: what it makes on the
    host, or copies there, is a host placeholder."""
    on = int(bool(on) and T.device == "meta")
    T.host_made += on
    T.offload += on
    T.says_host += on  # (they answer .device as the host, as FSDP1's do)
    try:
        yield
    finally:
        T.host_made -= on
        T.offload -= on
        T.says_host -= on


def _patch_builder(mod):
    cls = getattr(mod, "OpBuilder", None)
    if cls is None or getattr(cls.load, "_torchmem", False):
        return

    def load(self, verbose=True):
        return op_for(getattr(self, "name", "") or type(self).__name__)

    load._torchmem = True
    cls.load = load
    if hasattr(cls, "jit_load"):
        cls.jit_load = load


def _patch_engine(torch, T, mod):
    Engine = getattr(mod, "DeepSpeedEngine", None)
    if Engine is None or getattr(Engine.backward, "_torchmem", False):
        return

    def after(name):
        orig = getattr(Engine, name)

        def call(self, *a, **k):
            with _offloading(T, offloads(getattr(self, "_config", None))):
                out = orig(self, *a, **k)
            try:
                classify(torch, T, self)
            except Exception:
                _debug()
            return out

        call._torchmem = True
        call.__doc__ = orig.__doc__
        setattr(Engine, name, call)

    for name in ("forward", "backward", "step"):
        after(name)
    orig_init = Engine.__init__

    def init(self, *a, **k):
        cfg = k.get("config_class")
        model = k.get("model", a[1] if len(a) > 1 else None)
        if unpartitioned(torch, cfg, model):
            T.warn("zeroinit", "deepspeed.initialize", ZERO_INIT_NOTE)
        with _offloading(T, offloads(cfg)):
            orig_init(self, *a, **k)
        try:
            s = stage(self)
            T.wrapped("DeepSpeed ZeRO-%d" % s if s else "DeepSpeed")
            classify(torch, T, self)
        except Exception:
            _debug()

    Engine.__init__ = init
