"""torchmem estimate --trace: what training scripts ask of the GPU besides
tensors, answered as a GPU would (_trace.py redirects the tensors).

Found by running public training scripts under the tracer
(bench/results/trace-real-scripts.md): timing with torch.cuda.Event,
copies on side streams, the CUDA RNG state saved in checkpoints,
torch.cuda.memory_stats() in logging, torch.accelerator (torch >= 2.6,
pytorch/examples), nn.DataParallel around the model (pytorch/examples
imagenet), GradScaler (its kernels have no meta or 1.13 CPU version),
and data read back from the device (.cpu().numpy(), f"{loss:.3f}").

None of these allocates device memory worth counting on a GPU except the
copies they make, which the tracer records as it does any other. Nothing
here may raise into the program; of the hook it imports only _common.
"""

import contextlib
import os
import sys
import threading

from torchmem_hook import _common, _trace_compat, _trace_dist, _trace_masks, _trace_values

_debug = _common.debug

# get_device_properties().total_memory when no --gpu says it: scripts that
# size their batch from it (or DataParallel, which divides by it) need a
# GPU's figure, the largest common one.
DEFAULT_TOTAL_MEMORY = 80 << 30

# A tensor read back from the meta device (.cpu(), .numpy()) becomes real
# zeros on the host up to this size, so numpy, PIL and metrics code keep
# working; above it, a host placeholder without data (a 7B model's state
# dict copied to the host would otherwise take its size in RAM here).
HOST_ZEROS_MAX = 256 << 20

# What an answer returns to let the call run as it is.
PASS = object()

# One process is traced. On torch >= 2.1 a process group is traced as its
# rank 0 (_trace_dist.py), torchrun's workers as its rank 0 worker; where
# that cannot be, the trace ends where a program turns distributed, saying
# what to do.
DISTRIBUTED_HELP = ("its workers are not traced: run the script with torchrun (traced as its rank 0 "
                    "worker, torch 2.1 or later) or as one process, then size the multi-GPU layout with "
                    "torchmem estimate --ddp, --fsdp, --zero or --tp")

# Launchers by the program name they run as (torchrun, accelerate launch,
# deepspeed) or the module file `python -m` runs.
_LAUNCHERS = ("torchrun", "accelerate", "deepspeed")
_LAUNCHER_MODULES = ("torch/distributed/run.py", "torch/distributed/launch.py")


def launcher(argv):
    """The launcher this process is ("torchrun", ...), or "" for a program."""
    if not argv:
        return ""
    path = str(argv[0]).replace("\\", "/")
    name = os.path.basename(path)
    if name in _LAUNCHERS:
        return name
    for m in _LAUNCHER_MODULES:
        if path.endswith(m):
            return "torch.distributed." + os.path.basename(m)[:-3]
    if path == "-m":
        # python -m torch.distributed.run: torch is imported while runpy
        # finds the module, before argv[0] names it; the command line does.
        return _launcher_module(_command_line())
    return ""


def _command_line():
    orig = getattr(sys, "orig_argv", None)  # Python >= 3.10
    if orig:
        return list(orig)
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read(1 << 16).split(b"\0") if a]
    except Exception:
        return []


def _launcher_module(cmd):
    for i, a in enumerate(cmd[:-1]):
        if a == "-m":
            mod = cmd[i + 1]
            for m in _LAUNCHER_MODULES:
                if mod == m[:-3].replace("/", "."):
                    return mod
            return ""
    return ""


# Streams: torch.cuda.Stream() hands out the streams of a pool, 32 per
# priority (c10/cuda/CUDAStream.cpp's kStreamsPerPool), round robin. The
# trace numbers them as the allocator sees them: 0 the default stream, then
# each pool's 32 (low priority 1-32, high 33-64). The caching allocator
# keeps a stream's freed blocks for that stream (internal/estimate
# allocator.go), so what a side stream allocates is written under its
# number (T events).
STREAMS_PER_POOL = 32
_stream_next = [0, 0]  # the next stream of each pool (low, high priority)


# The current stream is CUDA's per thread (a prefetch thread's
# `with torch.cuda.stream(s)` leaves the main thread's allocations on its
# own): each thread's, None for the default one.
class _Current(threading.local):
    stream = None


_local = _Current()


class _Stream(object):
    """torch.cuda.Stream on a machine that has none: work is in order; the
    stream's number is what the allocator's pools follow."""

    def __init__(self, device=None, priority=0, _id=None, **kwargs):
        self.priority = priority
        if _id is None:
            pool = 1 if priority < 0 else 0
            _id = 1 + pool * STREAMS_PER_POOL + _stream_next[pool] % STREAMS_PER_POOL
            _stream_next[pool] += 1
        self.stream_id = _id
        self.cuda_stream = _id
        self.device_type, self.device_index = "cuda", 0  # torch.Stream's
        self._entered = []  # the _StreamContexts of `with stream:`

    def __eq__(self, other):
        return isinstance(other, _Stream) and other.stream_id == self.stream_id

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("torchmem-stream", self.stream_id))

    def __enter__(self):  # torch.Stream as a context (torch >= 2.5)
        self._entered.append(_StreamContext(self))
        return self._entered[-1].__enter__()

    def __exit__(self, *exc):
        return self._entered.pop().__exit__(*exc) if self._entered else False

    def wait_event(self, event):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self, event=None):
        return event if event is not None else _Event()

    def query(self):
        return True

    def synchronize(self):
        pass

    def is_capturing(self):
        # torch >= 2.1x optimizers ask torch.accelerator.current_stream()
        # before every step (a CUDA graph capture check): no capture here
        return False


_default = _Stream(_id=0)


def current_stream(*a, **k):
    return _local.stream or _default


def set_stream(stream):
    """torch.cuda.set_stream: a stream of torch's own (not the tracer's)
    leaves the default one current."""
    _local.stream = stream if isinstance(stream, _Stream) else None


def current_stream_id():
    """The number the trace writes for the current stream (0: default)."""
    return current_stream().stream_id


class _StreamContext(object):
    """torch.cuda.stream(s) and torch.cuda.StreamContext(s): s current
    inside (None: no change)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        self.prev = _local.stream
        if self.stream is not None:
            set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        _local.stream = self.prev
        return False


class _Event(object):
    """torch.cuda.Event: already complete, no time elapsed."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing

    def record(self, stream=None):
        pass

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        return 0.0


def install(torch, T):
    """Patch torch.cuda, torch.accelerator and nn.DataParallel (after
    _trace.py's own torch.cuda answers)."""
    for f in (_streams, _rng, _memory, _properties, _accelerator, _data_parallel, _load_cpu,
              _optimizers, _fused_on_meta, _distributed):
        try:
            f(torch, T)
        except Exception:
            _debug()


@contextlib.contextmanager
def _nothing(*a, **k):
    yield


def is_index(d):
    """d is a device index (model.to(local_rank), device=rank): a CUDA
    device to torch, which a CPU build refuses as "the current accelerator"."""
    return isinstance(d, int) and not isinstance(d, bool)


def _gpu(d):
    """The CUDA device an index or the device marker stands for."""
    return "cuda:%d" % (d if is_index(d) else 0)


def _const(v):
    return lambda *a, **k: v


def _streams(torch, T):
    cuda = torch.cuda

    def stream(stream=None):  # torch.cuda.stream(stream=s) too (timm's prefetcher)
        return _StreamContext(stream)

    patch = {"Stream": _Stream, "Event": _Event, "current_stream": current_stream,
             "default_stream": _const(_default), "stream": stream, "StreamContext": _StreamContext,
             "set_stream": set_stream,
             "set_sync_debug_mode": _const(None), "is_initialized": _const(True), "init": _const(None)}
    for k, v in patch.items():
        setattr(cuda, k, v)
    _record_stream(torch)
    if not hasattr(torch._C, "_cuda_getCurrentRawStream"):
        # A CPU build lacks it; CUDA extensions read it as they are imported
        # (bitsandbytes' CUDA backend). Their kernels never run on the
        # tracer's tensors: meta tensors dispatch to the ops' fake kernels.
        torch._C._cuda_getCurrentRawStream = _const(0)
    nvtx = getattr(cuda, "nvtx", None)
    if nvtx is not None:  # torch._C._nvtx exists only in CUDA builds
        for k in ("range_push", "range_pop", "mark", "range_start", "range_end"):
            setattr(nvtx, k, _const(None))
        nvtx.range = _nothing  # a context manager, and a decorator as torch's is


def _record_stream(torch):
    """t.record_stream(torch.cuda.current_stream()), which DeepSpeed's ZeRO-3
    calls on each gathered parameter: torch's argument parser refuses the
    stream answered here (a _Stream) before any mode sees the call. Work on
    this machine is in order: recording a stream changes nothing. A stream
    of torch's own goes to torch (and to answers' record_stream)."""
    orig = torch.Tensor.record_stream

    def record_stream(self, stream):
        if isinstance(stream, _Stream):
            return None
        return orig(self, stream)

    record_stream.__doc__ = orig.__doc__
    record_stream._torchmem_orig = orig
    torch.Tensor.record_stream = record_stream


def _rng(torch, T):
    # The CUDA generator's state is 16 bytes (Philox seed and offset) in a
    # CPU ByteTensor; checkpoints save it, resumes set it.
    def get_rng_state(device="cuda"):
        return torch.zeros(16, dtype=torch.uint8)

    patch = {"get_rng_state": get_rng_state, "get_rng_state_all": lambda: [get_rng_state()],
             "set_rng_state": _const(None), "set_rng_state_all": _const(None),
             "seed": _const(None), "seed_all": _const(None), "initial_seed": _const(0)}
    for k, v in patch.items():
        setattr(torch.cuda, k, v)


def _memory(torch, T):
    """The caching allocator's counters, as far as the trace knows them: the
    bytes of the storages live now and at the peak, and what the cache
    holds (_trace._Tracer.cached; the allocator model's rounding and caching
    come after the trace, in torchmem)."""

    def stats(*a, **k):
        out = {"num_alloc_retries": 0, "num_ooms": 0}
        for name in ("allocated_bytes", "active_bytes", "requested_bytes"):
            out[name + ".all.current"] = T.allocated
            out[name + ".all.peak"] = T.peak
        out["reserved_bytes.all.current"] = T.cached  # _trace._Tracer.cached
        out["reserved_bytes.all.peak"] = max(T.peak, T.cached)
        return out

    def summary(*a, **k):
        return ("torchmem trace: %d bytes allocated, %d at the peak (storages as recorded; "
                "torchmem models the allocator after the trace)" % (T.allocated, T.peak))

    def mem_get_info(*a, **k):
        total = torch.cuda.get_device_properties(0).total_memory
        return (max(0, total - T.cached), total)

    patch = {"memory_stats": stats, "memory_summary": summary, "mem_get_info": mem_get_info,
             "memory_cached": lambda *a, **k: T.cached, "max_memory_cached": lambda *a, **k: max(T.peak, T.cached),
             "reset_max_memory_allocated": lambda *a, **k: setattr(T, "peak", T.allocated),
             "reset_max_memory_cached": _const(None), "reset_accumulated_memory_stats": _const(None),
             "set_per_process_memory_fraction": lambda *a, **k: _fraction(T, *a, **k), "memory_snapshot": _const([]),
             "list_gpu_processes": _const("")}
    for k, v in patch.items():
        setattr(torch.cuda, k, v)
    memory = getattr(torch.cuda, "memory", None)  # torch.cuda.memory.set_per_process_memory_fraction
    if memory is not None:
        memory.set_per_process_memory_fraction = patch["set_per_process_memory_fraction"]


def _fraction(T, fraction, device=None):
    """torch.cuda.set_per_process_memory_fraction: refused as PyTorch
    refuses it, else a K event (the replay caps the allocator there)."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError("Invalid fraction value: {}. Allowed range: 0~1".format(fraction))
    if fraction > 0:
        T.emit(["K", "memory_fraction", repr(fraction)])


def _properties(torch, T):
    orig = torch.cuda.get_device_properties

    def get_device_properties(*a, **k):
        p = orig(*a, **k)
        if not p.total_memory:
            p.total_memory = DEFAULT_TOTAL_MEMORY
        return p

    torch.cuda.get_device_properties = get_device_properties


def _accelerator(torch, T):
    """torch.accelerator (torch >= 2.6), which pytorch/examples' scripts ask
    which device to use: the GPU being traced."""
    acc = getattr(torch, "accelerator", None)
    if acc is None:
        return
    patch = {"is_available": _const(True), "device_count": _const(_trace_dist.gpus()),
             "device_index": _nothing,
             "current_accelerator": lambda *a, **k: torch.device("cuda"),
             "current_device_index": _const(0), "current_device_idx": _const(0),
             "set_device_index": _const(None), "set_device_idx": _const(None),
             "synchronize": _const(None), "current_stream": current_stream, "set_stream": set_stream}
    for k, v in patch.items():
        if hasattr(acc, k):
            setattr(acc, k, v)
    if hasattr(torch._C, "_get_accelerator"):
        # what torch's own code asks (fully_shard's default device mesh)
        torch._C._get_accelerator = lambda *a, **k: torch.device("cuda")
    mem = getattr(acc, "memory", None)
    if mem is not None:  # torch >= 2.8: torch.accelerator.memory, and its names on torch.accelerator
        for k in dir(mem):
            v = getattr(torch.cuda, k, None)
            if not k.startswith("_") and callable(v) and callable(getattr(mem, k)):
                setattr(mem, k, v)
                if callable(getattr(acc, k, None)):
                    setattr(acc, k, v)


def _data_parallel(torch, T):
    """nn.DataParallel on the one GPU the tracer shows: its forward copies
    host inputs to the GPU (a tensor already there is passed as it is) and
    runs the module. The real one first checks that every parameter is on
    cuda:0, which a meta or CPU tensor is not."""
    DP = torch.nn.DataParallel
    orig = DP.forward

    def to_device(x):
        if isinstance(x, torch.Tensor):
            return x.cuda()
        if isinstance(x, (list, tuple)):
            return type(x)(to_device(y) for y in x)
        if isinstance(x, dict):
            return type(x)((k, to_device(v)) for k, v in x.items())
        return x

    def forward(self, *inputs, **kwargs):
        if len(self.device_ids) > 1:
            return orig(self, *inputs, **kwargs)
        return self.module(*to_device(inputs), **to_device(kwargs))

    DP.forward = forward


def _distributed(torch, T):
    """init_process_group makes a one-rank fake world (_trace_dist.py), or,
    on a torch without one, ends the trace saying so: what ran before it
    (the model built, moved to the GPU) is reported."""
    dist = getattr(torch, "distributed", None)
    if dist is None or not hasattr(dist, "init_process_group"):
        return
    why = _trace_dist.supported(torch)
    if not why:
        _trace_dist.install(torch, T)
        return

    def init_process_group(*a, **k):
        T.end("error", "init_process_group", "a process group is not traced: " + why)

    dist.init_process_group = init_process_group


def _load_cpu(torch, T):
    """cpu mode: torch.load(map_location="cuda") restores each storage with
    .cuda(), which a CPU build refuses; load to the host as the device
    would hold it (meta mode has its own torch.load, reading no data)."""
    if T.device != "cpu":
        return
    orig = torch.load

    def load(f, map_location=None, *a, **k):
        if not is_cuda(map_location):
            return orig(f, map_location, *a, **k)
        T.redirect += 1  # what is made now is on the device
        try:
            return orig(f, "cpu", *a, **k)
        finally:
            T.redirect -= 1

    torch.load = load


def _optimizers(torch, T):
    import torch.optim.optimizer as om

    T.optimizer_made = False
    T.backwards = 0
    T.param_written = False  # since the last backward began (backward_begins)
    orig = om.Optimizer.__init__

    def __init__(self, *a, **k):
        T.optimizer_made = True
        orig(self, *a, **k)

    om.Optimizer.__init__ = __init__


def _fused_on_meta(torch, T):
    """torch >= 2.0: Adam/AdamW(fused=True) (nanoGPT asks for it on CUDA)
    checks that every parameter is on a device with fused kernels, which
    meta is not; the fused kernels have meta versions, so the meta run can
    take the GPU's path."""
    if T.device != "meta":
        return
    import torch.optim.optimizer as om

    orig = getattr(om, "_get_fused_kernels_supported_devices", None)
    if orig is None:
        return
    om._get_fused_kernels_supported_devices = lambda: list(orig()) + ["meta"]


# Backward passes with no weight written between them that are taken as
# a probe before training (yolov5's AutoBatch makes 15: three at each of
# five batch sizes) rather than as steps.
PROBE_PASSES = 64


def backward_begins(T):
    """A training loop that updates its weights by hand (p.data.add_(p.grad,
    alpha=-lr): pytorch/examples word_language_model) makes no torch.optim
    optimizer, so no optimizer step ends the trace: there, a backward after
    the weights were written (_trace._writes_param) starts a new step, and
    the trace ends when the steps asked for are done (the update of the
    last one included). Backward passes with no update between them are no
    steps: yolov5's AutoBatch runs forward and backward at five batch sizes
    before it makes its optimizer, and the trace must go on to the
    training that follows. After PROBE_PASSES of them with no update (a
    loop that only reads gradients, or updates its inputs), each backward
    is a step again, so that such a loop still ends."""
    if getattr(T, "optimizer_made", True) or T.phase == "backward":
        return
    written, T.param_written = T.param_written, False
    if T.backwards > 0 and (written or T.backwards >= PROBE_PASSES):
        T.done += 1
        T.set_phase("after_step")
        if T.done >= T.steps:
            T.end("steps", "", "%d backward passes traced (no torch.optim optimizer: each "
                  "backward and the update after it counted as a step)" % T.done)
    T.backwards += 1


def answers(torch, T):
    """The Tensor methods answered for device tensors as on a GPU, for
    _trace.py's function mode: func -> handler(func, args, kwargs), which
    returns PASS to let the call run."""
    Tensor = torch.Tensor
    meta = T.device == "meta"

    def is_cuda(func, args, kwargs):
        t = args[0]
        if meta:
            return bool(t.is_meta) and not T.is_host(t) and not T.is_own(t)
        return T.is_device_storage(t)

    def record_stream(func, args, kwargs):
        return None if T.is_device_storage(args[0]) else PASS

    def on_device(t):
        return t.is_meta if meta else T.is_device_storage(t)

    def host_copy(t, d=None):
        if not meta:
            # cpu mode: a GPU's .cpu() is a copy, and the device tensor
            # can go; the CPU tensor standing for it would be returned as
            # it is (made outside torch, the tracer does not see it)
            return torch.from_numpy(t.detach().numpy().copy())
        if T.is_host(t):
            return t  # already a host placeholder
        if T.offload or d is T.host_marker:
            # FSDP's CPU offload (what it moves to the host, or to where an
            # offloaded tensor is): no values are read back
            c = placeholder(t)
            T.offloaded(c, d is T.host_marker)
            return c
        T.warn("placeholder", "cpu", "a tensor copied from the device has no data: zeros were used")
        if t.numel() * t.element_size() <= HOST_ZEROS_MAX:
            z = torch.zeros(t.shape, dtype=t.dtype)
            _trace_values.mark_placeholder(z)  # not the device's values, if it goes back
            return z
        return placeholder(t)

    def placeholder(t):
        T.hosting += 1  # the tracer records it as a host placeholder
        try:
            return torch.empty_like(t)
        finally:
            T.hosting -= 1

    def cpu(func, args, kwargs):
        t = args[0]
        if not on_device(t) or t.requires_grad and not meta:
            return PASS
        return host_copy(t)

    def to(func, args, kwargs):
        t = args[0]
        d = kwargs.get("device", args[1] if len(args) > 1 else None)
        # (a device tensor's device, the marker, is the GPU: in cpu mode it
        # is a torch.device("cpu") too, told by identity)
        if d is T.device_marker or not is_cpu(d) or not on_device(t) or t.requires_grad and not meta:
            return PASS
        c = host_copy(t, d)
        rest = dict((k, v) for k, v in kwargs.items() if k in ("dtype", "copy", "memory_format"))
        if len(args) > 2 and isinstance(args[2], torch.dtype):
            rest["dtype"] = args[2]
        return c.to(**rest) if rest.get("dtype") is not None else c

    def parse_to(func, args, kwargs):
        # Module.to(device=...) parses its arguments with _parse_to, whose
        # device= keyword the redirect would turn into the trace device: the
        # module's tensors would then be "moved" to where they already are
        # (meta), and nothing copied. The tensors' own .to() is redirected.
        # An index (model.to(local_rank)) is a CUDA device (is_index), and
        # so is a device tensor's device (T.device_marker): what parses
        # x.to(w.device) sees the GPU, not meta (bitsandbytes' Params4bit
        # quantizes only when moved to a device that is not meta).
        if args and (is_index(args[0]) or args[0] is T.device_marker):
            args = (_gpu(args[0]),) + tuple(args[1:])
        d = kwargs.get("device")
        if is_index(d) or d is T.device_marker:
            kwargs = dict(kwargs, device=_gpu(d))
        return func(*args, **kwargs)

    def device(func, args, kwargs):
        # a device tensor (a DTensor of device shards too) answers the
        # marker (T.device_marker); FSDP1's offloaded tensors the host's
        # (T.host_marker)
        t = args[0]
        if T.is_device_storage(_common.local_shard(t)):
            return T.device_marker
        return T.host_marker if T.is_offloaded(t) else PASS

    def index_device(func, args, kwargs):
        # torch.device(local_rank): torch 2.x takes a bare index for the
        # accelerator's device, which a CPU build has none of (FSDP1's
        # device_id=torch.cuda.current_device())
        if len(args) == 1 and not kwargs and is_index(args[0]):
            return func("cuda", args[0])
        if len(args) == 1 and not kwargs and args[0] is T.device_marker:
            return args[0]  # a device tensor's device, copied, is still the device
        return PASS

    out = {Tensor.is_cuda.__get__: is_cuda,
           getattr(Tensor.record_stream, "_torchmem_orig", Tensor.record_stream): record_stream,
           Tensor.cpu: cpu, Tensor.to: to, torch.device: index_device, Tensor.device.__get__: device}
    out.update(_shard_fills(torch))
    parse = getattr(getattr(torch._C, "_nn", None), "_parse_to", None)
    if parse is not None:
        out[parse] = parse_to
    if not meta:
        return out

    def numpy(func, args, kwargs):
        t = args[0]
        if not t.is_meta:
            return PASS
        T.warn("placeholder", "numpy", "a tensor without data read as numpy: zeros were used")
        z = torch.zeros(t.shape, dtype=t.dtype)
        if func is Tensor.__array__ and len(args) > 1 and args[1] is not None:
            a = z.numpy().astype(args[1])
        else:
            a = z.numpy()
        _trace_values.mark_placeholder(a)  # torch.from_numpy(a).cuda() is no known value
        return a

    def tolist(func, args, kwargs):
        t = args[0]
        if not t.is_meta:
            return PASS
        T.warn("placeholder", "tolist", "a value read from a tensor without data: zeros were used")
        return torch.zeros(t.shape, dtype=t.dtype).tolist()

    def fmt(func, args, kwargs):
        t = args[0]
        if not t.is_meta or t.dim() != 0:
            return PASS
        T.warn("placeholder", "__format__", "a value read from a tensor without data: 0 was used")
        return format(torch.zeros((), dtype=t.dtype).item(), args[1] if len(args) > 1 else "")

    out.update({Tensor.numpy: numpy, Tensor.__array__: numpy,
                Tensor.tolist: tolist, Tensor.__format__: fmt})
    out.update(_checks(torch, T))

    def data_ptr(func, args, kwargs):
        t = args[0]
        if not isinstance(t, Tensor) or not t.is_meta or type(t) is not Tensor and type(t) is not torch.nn.Parameter:
            return PASS
        st = getattr(t, "untyped_storage", None)  # (torch 1.13: _storage)
        st = st() if st is not None else t._storage()
        return st.data_ptr() + t.storage_offset() * t.element_size()  # (_trace.py's _install_fake_ptrs)

    out[Tensor.data_ptr] = data_ptr

    def is_meta(func, args, kwargs):
        # FSDP asks whether a parameter is still to be made (on meta); a
        # device tensor or a host placeholder is made (_trace_dist's
        # _fsdp1 and _fsdp2_made), and so is a DTensor whose shard is one
        # (FSDP1 over a tensor-parallel model: 2D parallelism)
        if not T.not_meta:
            return PASS
        t = _common.local_shard(args[0])
        return False if T.is_device_storage(t) or T.is_host(t) else PASS

    out[Tensor.is_meta.__get__] = is_meta
    return out


def _shard_fills(torch):
    """In-place random fills of a DTensor (reset_parameters of a model
    sharded before its weights were made: FSDP2's deferred init) fill each
    shard in place. DTensor's own path first propagates the sharding on
    fake CUDA tensors, which a CPU build cannot make; the values are not
    the trace's business, the memory is the same (none)."""
    Tensor = torch.Tensor

    def fill(func, args, kwargs):
        t = args[0] if args else kwargs.get("tensor")
        local = getattr(t, "_local_tensor", None)
        if not isinstance(local, Tensor) or type(t).__name__ != "DTensor":
            return PASS
        kw = dict((k, local if v is t else v) for k, v in kwargs.items())
        if kw.get("tensor") is local:
            func(**kw)  # nn.init hands the tensor over as an argument and a keyword
        else:
            func(local, *args[1:], **kw)
        return t

    names = ("uniform_", "normal_", "bernoulli_", "exponential_", "geometric_", "log_normal_",
             "random_", "cauchy_")
    out = dict((getattr(Tensor, n), fill) for n in names if hasattr(Tensor, n))
    # torch.nn.init's initialisers hand themselves to the function mode
    # once, and their bodies (the fills above) run without it
    init = torch.nn.init
    for n in dir(init):
        f = getattr(init, n)
        if n.endswith("_") and not n.startswith("_") and callable(f):
            out[f] = fill
    return out


def _checks(torch, T):
    """A script's checks of its own numbers, on tensors without data, pass
    (meta mode): the 0 or False a read of a placeholder gives would fail
    them, and the run would take the path of a failed check, which a GPU
    run does not. YOLOv5 compares its detections in float32 and under
    autocast (torch.allclose) and turns mixed precision off when they
    differ; loops skip a step whose loss is not finite. allclose and equal
    of placeholders answer True (known values are compared), isfinite is
    all True, isnan and isinf all False (each marked so for the reads of
    masks too large to keep values of, _trace_masks.healthy)."""
    Tensor = torch.Tensor
    shadow = _trace_values.shadow

    def agree(func, args, kwargs):
        ts = [a for a in args[:2] if isinstance(a, Tensor)]
        if len(ts) < 2 or not any(t.is_meta for t in ts):
            return PASS
        known = [shadow(t) if t.is_meta else t for t in ts]
        if all(k is not None for k in known):
            return func(known[0], known[1], *args[2:], **kwargs)
        name = getattr(func, "__name__", str(func))
        T.warn("check", name, "a comparison of tensors without data was taken to hold")
        if name == "equal":
            return tuple(ts[0].shape) == tuple(ts[1].shape)
        return True

    def health(finite):
        def h(func, args, kwargs):
            t = args[0] if args else kwargs.get("input")
            if not isinstance(t, Tensor) or not t.is_meta or shadow(t) is not None:
                return PASS
            name = getattr(func, "__name__", str(func))
            T.warn("check", name, "a tensor without data was taken to be finite")
            out = func(*args, **kwargs)
            _trace_values.keep(out, (torch.ones if finite else torch.zeros)(tuple(out.shape), dtype=torch.bool))
            _trace_masks.healthy(out, finite)
            return out
        return h

    fs = {torch.allclose: agree, Tensor.allclose: agree, torch.equal: agree, Tensor.equal: agree}
    for n in ("isfinite", "isnan", "isinf", "isposinf", "isneginf"):
        for f in (getattr(torch, n, None), getattr(Tensor, n, None)):
            fs[f] = health(n == "isfinite")
    return dict((f, h) for f, h in fs.items() if f is not None)


def transparent(torch):
    """Python-level torch functions whose ops the tracer must see one by
    one. Such a function (F.multi_head_attention_forward) hands itself to
    the torch-function mode once, at its top (handle_torch_function), and
    the mode is off while its body runs: the scaled_dot_product_attention
    and the projections inside would go by unseen, so the GPU's fused
    attention kernel and autocast's casts would not be traced for
    nn.MultiheadAttention, nn.Transformer* and torchvision's ViT."""
    F = torch.nn.functional
    return set(f for f in (getattr(F, "multi_head_attention_forward", None),) if f is not None)


def run_transparent(mode, torch, func, args, kwargs):
    """func's body with the mode on again, F.has_torch_function answered
    false for the call (F.softmax and F.dropout inside check
    has_torch_function_unary, the ATen ones are C: they dispatch as usual)."""
    return _trace_compat.run_unchecked(mode, torch.nn.functional, func, args, kwargs)


def linear_bias_in_place(torch, args, kwargs):
    """F.linear as at::linear runs it on a GPU when it goes by matmul (an
    input of 3 or more dims that is not contiguous: nn.MultiheadAttention
    with batch_first, a linear on a permuted tensor): the matmul's output,
    then the bias added in place (output.add_(bias)). Under any dispatch
    mode isTensorSubclassLike() is true and ATen takes its out-of-place
    at::add instead, which would trace one more output-sized tensor per
    call. PASS where at::linear takes a fused path (addmm) either way."""
    names = ("input", "weight", "bias")
    a = dict(zip(names, args))
    a.update(kwargs)
    x, w, b = a.get("input"), a.get("weight"), a.get("bias")
    if not all(isinstance(t, torch.Tensor) for t in (x, w, b)) or x.dim() < 3 or x.is_contiguous():
        return PASS
    out = torch.matmul(x, w.t())
    out.add_(b)
    return out


def is_cpu(d):
    """d (a device, its name, or anything with a .type) is the CPU."""
    if isinstance(d, str):
        return d == "cpu"
    t = getattr(d, "type", None)
    return t == "cpu" and not callable(t)  # a tensor's .type is a method


def is_cuda(d):
    """d names the GPU; a map_location dict does when one of its targets does."""
    if isinstance(d, dict):
        return any(is_cuda(v) for v in d.values())
    if isinstance(d, str):
        return d.startswith("cuda")
    t = getattr(d, "type", None)
    return t == "cuda" and not callable(t)


def _noop_unscale(torch, grads, found_inf, inv_scale, *a, **k):
    return None


def _noop_update_scale(torch, scale, *a, **k):
    return scale


# GradScaler's two kernels: no meta kernel, and on torch 1.13 no CPU one.
# Both work in place on tensors already counted (the gradients, the scale,
# the growth tracker): on a GPU they allocate nothing, and the traced run
# never finds an inf, so nothing is left to do.
AMP_FALLBACKS = {"aten._amp_foreach_non_finite_check_and_unscale_.default": _noop_unscale,
                 "aten._amp_update_scale_.default": _noop_update_scale}


# Ops torch 1.13 has no meta kernel for, met in public training scripts
# (pytorch/examples, timm, torchvision's references), done by shape: each
# output is the shape its CUDA kernel gives it. torch >= 2.0 has most.
def _like_self(torch, grad, inp, *a, **k):
    # grad_input of a pooling or padding op: the input's shape
    return torch.empty_like(inp, memory_format=torch.contiguous_format)


def _pool_out(size, k, s, p, d, ceil):
    n = size + 2 * p - d * (k - 1) - 1
    out = (n + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1  # the last window must start inside the input
    return out


def _max_pool3d(torch, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    def three(v, dflt):
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        v = v or list(dflt)
        return v * 3 if len(v) == 1 else v

    k = three(kernel, ())
    s, p, d = three(stride, k), three(padding, ()), three(dilation, ())
    spatial = [_pool_out(x.shape[-3 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3)]
    shape = list(x.shape[:-3]) + spatial
    return (torch.empty(shape, dtype=x.dtype, device=x.device),
            torch.empty(shape, dtype=torch.long, device=x.device))


def _max_pool3d_backward(torch, grad, x, *a, **k):
    return torch.empty_like(x)


def _nll_loss2d(torch, x, target, weight=None, reduction=1, ignore_index=-100):
    shape = target.shape if reduction == 0 else ()
    return (torch.empty(shape, dtype=x.dtype, device=x.device),
            torch.empty((), dtype=x.dtype, device=x.device))


def _nll_loss2d_backward(torch, grad, x, *a, **k):
    return torch.empty_like(x)


def _grid_sampler_2d_backward(torch, grad, x, grid, *a, **k):
    mask = k.get("output_mask", a[-1] if a else (True, True))
    return (torch.empty_like(x) if mask[0] else None, torch.empty_like(grid))


def _embedding_bag_backward(torch, grad, indices, offset2bag, bag_size, max_indices, num_weights, *a, **k):
    return torch.empty((num_weights, grad.shape[-1]), dtype=grad.dtype, device=grad.device)


def _masked_select(torch, x, mask):
    # The size depends on the data: counted when the mask's values are
    # known, else the most it can be (every element selected).
    n = torch.broadcast_shapes(x.shape, mask.shape)
    s = _trace_values.shadow(mask)
    if s is not None:
        count = int(s.expand(n).count_nonzero())
    else:
        count = 1
        for v in n:
            count *= v
    return torch.empty((count,), dtype=x.dtype, device=x.device)


def _multinomial(torch, probs, num_samples, *a, **k):
    # sampling in a training script's progress callback (minGPT generate)
    shape = tuple(probs.shape[:-1]) + (num_samples,)
    return torch.empty(shape, dtype=torch.long, device=probs.device)


def _grouped_mm(torch, mat_a, mat_b, offs=None, bias=None, out_dtype=None):
    """aten._grouped_mm (a mixture of experts' grouped GEMM: transformers
    5.x's experts, torchtitan) in float32, which torch >= 2.9's CUDA kernel
    runs by its fallback (one mm per group into the output) while the meta
    kernel of torch up to 2.14 accepts only bf16 and fp16: transformers
    calls it with the fp32 weights of autocast training. The output is
    create_grouped_gemm_output_tensor's (GroupedMMUtils.h): its last dimension's
    stride padded to 16 bytes, as on a CUDA build."""
    if _common.torch_version(torch) < (2, 9) or mat_a.dtype != torch.float32:
        raise LookupError()  # refused on the GPU too: the meta kernel's error stands
    a2, b2 = mat_a.dim() == 2, mat_b.dim() == 2
    if a2:
        size = [offs.size(0), mat_a.size(0), mat_b.size(1)] if b2 else [mat_a.size(0), mat_b.size(-1)]
    else:
        size = [mat_a.size(1), mat_b.size(1)] if b2 else [mat_a.size(0), mat_a.size(1), mat_b.size(-1)]
    dtype = out_dtype or mat_a.dtype
    align = 16 // dtype.itemsize
    padded = (size[-1] + align - 1) // align * align
    stride = [size[1] * padded, padded, 1] if a2 == b2 else [padded, 1]
    return torch.empty_strided(size, stride, dtype=dtype, device=mat_a.device)


# Ops whose meta kernel refuses inputs the GPU's kernel takes (or that
# refuse on meta what only the data decides: _trace_masks'): their
# RuntimeError sends them to META_FALLBACKS, which raise LookupError for
# inputs the GPU refuses too (the meta kernel's error then stands).
REFUSED_ON_META = _trace_masks.REFUSED_ON_META | frozenset(["aten._grouped_mm.default"])

# Extension ops with no autograd kernel, which torch 1.13 refuses for meta
# tensors at the AutogradMeta key ("Could not run 'torchvision::nms' with
# arguments from the 'AutogradMeta' backend"): the redirect mode runs them
# below autograd, where the dispatch mode's fallback sizes them.
NO_AUTOGRAD_META = frozenset(["torchvision::nms"])


def _bn_stats(torch, x, *a, **k):
    # SyncBatchNorm's CUDA kernels (no meta or CPU one): per-channel mean
    # and invstd, in float for a half input as CUDA accumulates
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    c = x.shape[1]
    return (torch.empty((c,), dtype=acc, device=x.device), torch.empty((c,), dtype=acc, device=x.device))


def _bn_gather(torch, x, mean, *a, **k):
    c = x.shape[1]
    return (torch.empty((c,), dtype=mean.dtype, device=x.device), torch.empty((c,), dtype=mean.dtype, device=x.device))


def _bn_elemt(torch, x, *a, **k):
    return torch.empty_like(x)


def _bn_backward_elemt(torch, grad, x, *a, **k):
    return torch.empty_like(x)


def _bn_backward_reduce(torch, grad, x, mean, invstd, weight, input_g, weight_g, bias_g, *a, **k):
    c = x.shape[1]
    wd = weight.dtype if weight is not None else x.dtype

    def out(need, dtype):
        return torch.empty((c,) if need else (0,), dtype=dtype, device=x.device)

    return (out(input_g, mean.dtype), out(input_g, mean.dtype), out(weight_g, wd), out(bias_g, wd))


# torchvision's RoI ops (Faster/Mask R-CNN's MultiScaleRoIAlign, Fast
# R-CNN's RoIPool): torchvision 0.14 (torch 1.13) has no meta kernel for
# them (0.15+ registers its own). Their outputs by shape: a pooled map per
# RoI, and in the backward the feature map's gradient.
def _roi_align(torch, x, rois, scale, ph, pw, *a, **k):
    return torch.empty((rois.shape[0], x.shape[1], ph, pw), dtype=x.dtype, device=x.device)


def _roi_align_backward(torch, grad, rois, scale, ph, pw, batch, channels, h, w, *a, **k):
    return torch.empty((batch, channels, h, w), dtype=grad.dtype, device=grad.device)


def _roi_pool(torch, x, rois, scale, ph, pw, *a, **k):
    shape = (rois.shape[0], x.shape[1], ph, pw)
    return (torch.empty(shape, dtype=x.dtype, device=x.device),
            torch.empty(shape, dtype=torch.int32, device=x.device))  # (output, argmax)


def _roi_pool_backward(torch, grad, rois, argmax, scale, ph, pw, batch, channels, h, w, *a, **k):
    return torch.empty((batch, channels, h, w), dtype=grad.dtype, device=grad.device)


# CTC loss (wav2vec2/HuBERT fine-tuning, speech models' CTC heads): no
# meta kernel in any torch. CUDA's (LossCTC.cu) forward returns the
# per-sample loss and log_alpha, (batch, input length, 2 x the longest
# target + 1) in log_probs' dtype, which autograd keeps for the backward;
# the backward returns the gradient, log_probs' shape made contiguous,
# and takes log_beta, log_alpha's twin, for the call (ctc_workspace).
def _ctc_loss(torch, log_probs, targets, input_lengths, target_lengths, *a, **k):
    t, b = log_probs.shape[0], (log_probs.shape[1] if log_probs.dim() == 3 else 1)
    s = _trace_masks.ctc_target_length(target_lengths, targets)[0]
    return (torch.empty((b,), dtype=log_probs.dtype, device=log_probs.device),
            torch.empty((b, t, 2 * s + 1), dtype=log_probs.dtype, device=log_probs.device))


def _ctc_loss_backward(torch, grad, log_probs, *a, **k):
    return torch.empty(tuple(log_probs.shape), dtype=log_probs.dtype, device=log_probs.device)


# LossCTC.cu's choice of its backward's "large" path (more scratch).
def _ctc_is_large(t, b, labels):
    return (2 * t + (24 * b) // 10 + (2 * labels) // 10) > 450


def ctc_workspace(torch, op, args):
    """The scratch CUDA's CTC backward takes for its call: log_beta (as
    log_alpha); on its large path also log_alpha + log_beta over the
    blanks' rows, (batch, input length, longest target + 1), and their
    logsumexp: its maxes, (batch, input length, 1), the rows less them
    (exp_ in place: one more of the rows' size, at once with them), and
    its result. (Measured on an H200, torch 2.11: a batch of 16 over 1,500
    frames, targets up to 200, was 9.6 % over the trace with one of them.)"""
    if not op.startswith("aten._ctc_loss_backward") or len(args) < 7:
        return []
    log_probs, log_alpha = args[1], args[6]
    like = dict(dtype=log_alpha.dtype, device=log_alpha.device)
    ws = [torch.empty(tuple(log_alpha.shape), **like)]
    b, t, width = (int(x) for x in log_alpha.shape)
    if _ctc_is_large(int(log_probs.shape[0]), b, int(log_probs.shape[-1])):
        rows = (b, t, width // 2 + 1)
        ws += [torch.empty(rows, **like), torch.empty((b, t, 1), **like),
               torch.empty(rows, **like), torch.empty((b, t, 1), **like)]
    return ws


META_FALLBACKS = {
    "aten._ctc_loss.default": _ctc_loss,
    "aten._ctc_loss.Tensor": _ctc_loss,
    "aten._ctc_loss_backward.default": _ctc_loss_backward,
    "aten._ctc_loss_backward.Tensor": _ctc_loss_backward,
    "torchvision.roi_align.default": _roi_align,
    "torchvision._roi_align_backward.default": _roi_align_backward,
    "torchvision.roi_pool.default": _roi_pool,
    "torchvision._roi_pool_backward.default": _roi_pool_backward,
    "aten.batch_norm_stats.default": _bn_stats,
    "aten.batch_norm_gather_stats_with_counts.default": _bn_gather,
    "aten.batch_norm_elemt.default": _bn_elemt,
    "aten.batch_norm_backward_reduce.default": _bn_backward_reduce,
    "aten.batch_norm_backward_elemt.default": _bn_backward_elemt,
    "aten.multinomial.default": _multinomial,
    "aten._grouped_mm.default": _grouped_mm,
    "aten._adaptive_avg_pool2d_backward.default": _like_self,
    "aten._adaptive_avg_pool3d_backward.default": _like_self,
    "aten.reflection_pad2d_backward.default": _like_self,
    "aten.reflection_pad3d_backward.default": _like_self,
    "aten.replication_pad1d_backward.default": _like_self,
    "aten.replication_pad2d_backward.default": _like_self,
    "aten.replication_pad3d_backward.default": _like_self,
    "aten.smooth_l1_loss_backward.default": _like_self,
    "aten.max_pool3d_with_indices.default": _max_pool3d,
    "aten.max_pool3d_with_indices_backward.default": _max_pool3d_backward,
    "aten.nll_loss2d_forward.default": _nll_loss2d,
    "aten.nll_loss2d_backward.default": _nll_loss2d_backward,
    "aten.grid_sampler_2d_backward.default": _grid_sampler_2d_backward,
    "aten._embedding_bag_dense_backward.default": _embedding_bag_backward,
    "aten.masked_select.default": _masked_select,
    "aten.nonzero.default": _trace_masks.nonzero,
    "aten.where.default": _trace_masks.where,
    "aten._unique2.default": _trace_masks.unique,
    "aten.unique_consecutive.default": _trace_masks.unique_consecutive,
    "aten.bincount.default": _trace_masks.bincount,
    "aten.histc.default": _trace_masks.histc,
    "torchvision.nms.default": _trace_masks.nms,
    "aten.index.Tensor": _trace_masks.index,
    "aten.index_put.default": _trace_masks.index_put,
    "aten.index_put_.default": _trace_masks.index_put_,
    "aten._index_put_impl_.default": _trace_masks.index_put_impl_,
}


# Ops whose meta kernel takes a source of another dtype than self, which
# the device's kernel refuses (torch 2.x's meta index_add_ and index_copy_
# do; their CPU and CUDA kernels raise): aten op and overload -> the
# position of the source among the arguments. Under autocast a bf16
# output added into a float32 buffer fails on the GPU, and must fail in
# the trace too (the amp lever's retrace says where).
_SAME_DTYPE_SOURCE = {
    ("index_add_", "default"): 3, ("index_add", "default"): 3,
    ("index_copy_", "default"): 3, ("index_copy", "default"): 3,
    ("scatter_add_", "default"): 3, ("scatter_add", "default"): 3,
    ("scatter_", "src"): 3, ("scatter", "src"): 3,
}


def same_dtype_sources(torch):
    """_SAME_DTYPE_SOURCE as this torch's op overloads (the dispatch mode
    looks each op up by identity: no name is made for it)."""
    out = {}
    for (op, overload), i in _SAME_DTYPE_SOURCE.items():
        f = getattr(getattr(torch.ops.aten, op, None), overload, None)
        if f is not None:
            out[f] = (op, i)
    return out


def check_source_dtype(checks, func, args):
    """Raise as the device's kernel does when an op's source and self
    differ in dtype (checks: same_dtype_sources')."""
    c = checks.get(func)
    if c is None or len(args) <= c[1]:
        return
    self, src = args[0], args[c[1]]
    if getattr(self, "dtype", None) is not None and getattr(src, "dtype", None) is not None and self.dtype != src.dtype:
        raise RuntimeError("%s(): self (%s) and source (%s) must have the same scalar type" % (
            c[0], _dtype_name(self.dtype), _dtype_name(src.dtype)))


def _dtype_name(d):
    # torch.float32 -> Float, as ATen's scalar type names say it
    return {"float32": "Float", "float16": "Half", "bfloat16": "BFloat16", "float64": "Double"}.get(
        str(d).replace("torch.", ""), str(d).replace("torch.", ""))
