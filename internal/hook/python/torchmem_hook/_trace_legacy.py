"""CUDA's legacy tensor types and the default device, as older training
code uses them under the trace, where torch has no CUDA:

- `Tensor = torch.cuda.FloatTensor`, then `Tensor(np.ones(shape))`,
  `Tensor(n, m)` and `x.type(Tensor)` (PyTorch-GAN's scripts and the many
  copies of them); `isinstance(x, torch.cuda.FloatTensor)`; `x.type()`
  answering "torch.cuda.FloatTensor" for a device tensor;
- `torch.set_default_tensor_type("torch.cuda.FloatTensor")` (old SSD and
  YOLO code) and torch 2.x's `torch.set_default_device("cuda")`: tensors
  made without a device are made on the GPU.

A CPU-only torch refuses each ("type torch.cuda.FloatTensor not
available", "Cannot initialize CUDA without ATen_cuda library"), which
stopped the trace before the first step. Here each is the device
tensor it makes on a GPU: the types are stand-ins that make tensors with
device="cuda" (the trace's redirect moves those to its device), and the
tracer's function mode turns .type(T) into .to("cuda", T's dtype) and
gives factories without a device device="cuda" while the default is the
GPU."""

NAMES = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
         "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor")


class _Type(type):
    """A torch.cuda.*Tensor stand-in: calling it makes a device tensor of
    its dtype (no arguments: empty; sizes: uninitialised; data: a copy);
    isinstance asks a tensor's dtype and is_cuda."""

    def __call__(cls, *args, **kwargs):
        torch = cls._torch
        if not args:
            return torch.empty(0, dtype=cls.dtype, device="cuda")
        if len(args) == 1 and isinstance(args[0], torch.Size):
            args = tuple(args[0])
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return torch.empty(args, dtype=cls.dtype, device="cuda")
        data = args[0]
        if isinstance(data, torch.Tensor):
            return data.to(device="cuda", dtype=cls.dtype)
        return torch.tensor(data, dtype=cls.dtype, device="cuda")

    def __instancecheck__(cls, obj):
        torch = cls._torch
        return isinstance(obj, torch.Tensor) and obj.dtype == cls.dtype and bool(obj.is_cuda)


class Legacy(object):
    """The stand-ins installed, and what the function mode asks of them."""

    def __init__(self, torch, T):
        self.torch = torch
        self.T = T
        self.dtypes = {}  # a type (stand-in or original) or its name -> dtype
        self.names = {}  # dtype -> "torch.cuda.FloatTensor"
        self.host = {}  # a CPU type (torch.FloatTensor) or its name -> dtype
        self.default_cuda = False  # factories without a device make device tensors
        self.factories = set(f for f in (
            getattr(torch, n, None) for n in (
                "empty", "zeros", "ones", "full", "empty_strided", "rand", "randn", "randint", "randperm",
                "arange", "range", "linspace", "logspace", "eye", "tensor", "as_tensor", "asarray", "normal"))
            if f is not None)
        self.from_data = set(f for f in (getattr(torch, n, None) for n in ("tensor", "as_tensor", "asarray"))
                             if f is not None)
        for n in NAMES:
            dtype = getattr(getattr(torch, n, None), "dtype", None)
            if dtype is None:
                continue
            orig = getattr(torch.cuda, n, None)
            stand_in = _Type(n, (object,), {"dtype": dtype, "is_cuda": True, "_torch": torch,
                                           "__module__": "torch.cuda"})
            setattr(torch.cuda, n, stand_in)
            self.dtypes[stand_in] = dtype
            self.dtypes["torch.cuda." + n] = dtype
            if orig is not None:
                self.dtypes[orig] = dtype
            self.names[dtype] = "torch.cuda." + n
            self.host[getattr(torch, n)] = self.host["torch." + n] = dtype
        self._wrap_defaults()

    def dtype_of(self, t):
        """The dtype a legacy CUDA type (a stand-in, the original, or its
        name) stands for; None for anything else."""
        try:
            return self.dtypes.get(t)
        except TypeError:  # unhashable: not a type
            return None

    def type_call(self, args, kwargs, on_device):
        """Tensor.type(...): the name to answer (no type given, a device
        tensor), (device, dtype, non_blocking) for a move to the device
        (a CUDA type) or of a device tensor to the host (a CPU type,
        torch.FloatTensor: an accuracy's `.type(torch.FloatTensor)`), or
        None to let the call run."""
        t = args[0]
        to = args[1] if len(args) > 1 else kwargs.get("dtype")
        if to is None:
            return self.names.get(t.dtype) if on_device(t) else None
        blocking = kwargs.get("non_blocking", args[2] if len(args) > 2 else False)
        dtype = self.dtype_of(to)
        if dtype is not None:
            return "cuda", dtype, blocking
        try:
            dtype = self.host.get(to)
        except TypeError:  # unhashable: not a type
            return None
        if dtype is None or not on_device(t):
            return None
        return "cpu", dtype, blocking

    def device_default(self, func, args, kwargs):
        """While the default is the GPU (default_cuda, which the caller
        checks): kwargs with device="cuda" for a factory called without a
        device; kwargs as they are otherwise. A
        tensor of one Python number stays on the host: its value is read
        back (Adam's step count, torch.tensor(0.0), is a device scalar on
        a GPU; here its value would be lost, and a bias correction of
        1 - beta ** 0 divides by zero), and it holds no memory to speak of."""
        if func not in self.factories or kwargs.get("device") is not None:
            return kwargs
        if func in self.from_data and args and isinstance(args[0], (bool, int, float, complex)):
            return kwargs
        kwargs = dict(kwargs)
        kwargs["device"] = "cuda"
        return kwargs

    def _wrap_defaults(self):
        torch = self.torch
        orig_type = getattr(torch, "set_default_tensor_type", None)
        orig_device = getattr(torch, "set_default_device", None)
        legacy = self

        if orig_type is not None:
            def set_default_tensor_type(t):
                dtype = legacy.dtype_of(t)
                if dtype is None:
                    legacy.default_cuda = False
                    return orig_type(t)
                legacy.default_cuda = True
                if dtype.is_floating_point:  # what the type's floats are made as
                    torch.set_default_dtype(dtype)

            set_default_tensor_type.__doc__ = orig_type.__doc__
            torch.set_default_tensor_type = set_default_tensor_type

        if orig_device is not None:
            def set_default_device(device):
                if _names_cuda(torch, device):
                    legacy.default_cuda = True
                    return None
                legacy.default_cuda = False
                return orig_device(device)

            set_default_device.__doc__ = orig_device.__doc__
            torch.set_default_device = set_default_device


def _names_cuda(torch, d):
    if isinstance(d, int) and not isinstance(d, bool):
        return True  # an index: the accelerator's device
    if isinstance(d, torch.device):
        return d.type == "cuda"
    return isinstance(d, str) and d.startswith("cuda")


def install(torch, T):
    T.legacy = Legacy(torch, T)
