"""torchmem estimate --trace: what real model code (Hugging Face
transformers' GPT-2, Llama, BERT) needs from the tracer's modes.

- torch.autocast(x.device.type): model code picks the autocast device
  from a tensor (transformers' Llama rotary embedding:
  torch.autocast(device_type=x.device.type, enabled=False)). On meta that
  says "meta", which torch.autocast refuses ("unsupported scalarType" on
  2.x, "device_type must be 'cuda' or 'cpu'" on 1.13), while on the GPU it
  stands for it says "cuda". Only meta mode: in cpu mode "cpu" is a valid
  device type and the region does what it does on the host.
- gradient checkpointing under autocast: torch 2.x's checkpoint records
  the autocast state of the inputs' device type (_infer_device_type), "meta"
  here, where autocast is never on, and replays that in the backward's
  recompute: the recomputed blocks ran in fp32 where the GPU's run in bf16
  (TinyLlama amp-bf16 with checkpointing: the attention scores of the
  recomputed block twice their size). On meta the device type is "cuda",
  whose autocast state the tracer's autocast emulation uses. (torch 1.13's
  checkpoint asks torch.is_autocast_enabled(), CUDA's, already.)
- loss.backward(): Tensor.backward is a torch function, so it runs inside
  the redirect mode's handler, where torch has popped the mode; all of the
  backward pass would then run without it. Python code that runs in the
  backward pass (a gradient-checkpointed segment's forward, recomputed
  there: its dropout, its autocast casts, its .to("cuda")) would not be
  redirected. backward() re-enters the mode around autograd's backward.
- torch 1.13: the legacy constructor torch.Tensor([0.1, 0.2]) fails under
  any dispatch mode ("Creating a new Tensor subclass Tensor but the raw
  Tensor object is already associated", pytorch/pytorch#92754, fixed in
  2.0); bubbliiiing's detectors make their anchors so. It runs with the
  Python dispatch keys excluded: it makes a host tensor, nothing to record.
Nothing here may raise into the program."""


def install(torch, T):
    _legacy_constructor(torch)
    if T.device != "meta":
        return
    try:
        cls = torch.amp.autocast_mode.autocast
    except AttributeError:
        cls = getattr(torch, "autocast", None)
    if cls is None or getattr(cls.__init__, "_torchmem", False):
        return
    orig = cls.__init__

    def __init__(self, device_type, *args, **kwargs):
        if device_type == "meta":
            device_type = "cuda"
        return orig(self, device_type, *args, **kwargs)

    __init__._torchmem = True
    cls.__init__ = __init__
    _checkpoint_device(torch)


def _legacy_constructor(torch):
    if not torch.__version__.startswith(("0.", "1.")):
        return
    try:
        base = torch._C._TensorBase.__new__
        K = torch._C.DispatchKey
        keys = torch._C.DispatchKeySet(K.Python) | torch._C.DispatchKeySet(K.PythonTLSSnapshot)
        guard = torch._C.ExcludeDispatchKeyGuard
    except (AttributeError, TypeError):
        return

    def __new__(cls, *args, **kwargs):
        if cls is not torch.Tensor:
            return base(cls, *args, **kwargs)
        g = guard(keys)  # (a guard object on 1.13, not a context manager)
        try:
            return base(cls, *args, **kwargs)
        finally:
            del g

    torch.Tensor.__new__ = staticmethod(__new__)


def _checkpoint_device(torch):
    try:
        import torch.utils.checkpoint as ckpt
        orig = ckpt._infer_device_type
    except (ImportError, AttributeError):
        return  # torch 1.13

    def _infer_device_type(*args):
        d = orig(*args)
        return "cuda" if d == "meta" else d

    ckpt._infer_device_type = _infer_device_type


def backward(torch, mode, args, kwargs):
    """Tensor.backward(gradient, retain_graph, create_graph, inputs) as
    torch's own does it (torch.autograd.backward, looked up now: the
    tracer's phase hook wraps it), with the mode on again."""
    def run(t, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        return torch.autograd.backward(t, gradient, retain_graph, create_graph, inputs=inputs)

    return autograd_call(torch, mode, run, args, kwargs)


def is_autograd_entry(torch, func):
    """func is torch.autograd.backward or grad, which torch >= 2.1x hands
    to the function mode like Tensor.backward (has_torch_function)."""
    return getattr(func, "__module__", None) == "torch.autograd" and \
        getattr(func, "__name__", None) in ("backward", "grad")


def _no_torch_function(*a, **k):
    return False


def run_unchecked(mode, module, func, args, kwargs):
    """func with the mode on again, module.has_torch_function answered
    false for the call: a Python function that hands itself to the mode at
    its top (its has_torch_function check, which the mode makes true) would
    otherwise do so once more, and the mode runs what it is handed with
    itself popped. What func calls dispatches as usual."""
    orig = getattr(module, "has_torch_function", None)
    if orig is not None:
        module.has_torch_function = _no_torch_function
    try:
        with mode:
            return func(*args, **kwargs)
    finally:
        if orig is not None:
            module.has_torch_function = orig


def autograd_call(torch, mode, func, args, kwargs):
    """Run an autograd pass with the mode on: its recomputed checkpoint
    segments must be redirected too. torch >= 2.1x's torch.autograd.backward
    and grad ask has_torch_function first (torch 2.14: the recompute of a
    checkpointed block ran without the redirect: no CUDA dropout, no
    autocast, and checkpoint's metadata check failed)."""
    return run_unchecked(mode, torch.autograd, func, args, kwargs)
