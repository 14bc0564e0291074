"""Values the meta trace knows (torchmem estimate --trace, meta mode).

Meta tensors have shapes and no data, so whatever a script decides from
its data would be decided on placeholders (0, False). But much of what
small tensors hold is known: a batch of token ids, labels and an attention
mask come from the host with their values when the script moves them to
the GPU; torch.ones/zeros/full/arange make known values; and comparisons,
views, sums and cumulative sums of known values are known. Transformers
decides from them whether a causal mask can be left to the kernel
(`padding_mask.all()`: an all-ones attention mask on a GPU skips the mask,
a placeholder False makes a (B, 1, T, T) one per call), a loss which
positions count (`labels != -100`), a collator how much padding there is.

So a tensor of at most MAX elements keeps its values as a CPU tensor, its
shadow: made when known values enter (a host tensor copied to the device,
a factory), and carried through the ops in OPS by running the same ATen op
on the shadows of its inputs, when each device input has one. A shadow is
valid while its tensor's version counter (bumped by every in-place write,
through any view) is the one it was made at: an in-place op it could not
follow drops it. Reads (`.item()`, `bool(t)`, `.tolist()`, `.cpu()`) of a
tensor with a shadow answer from it (_trace_masks.install), and the
data-dependent sizes (nonzero, a boolean-mask index, unique, bincount)
are then exact rather than assumed.

When a tensor's values are not known but where they come from is, its
domain is: a selection (index, gather, a view) of a tensor with known
values, or a cast of one, holds some of those values. torch.unique of it
is then at most the domain (torchvision's detection heads take the feature
level of each of thousands of proposals, then loop `for lvl in
torch.unique(levels)`: 5 levels, not thousands), and `x == v` for one of
its m values is a mask with 1/m of its elements true (each value as often,
the balanced share _trace_masks takes for a router).
"""

import weakref

MAX = 1 << 20  # elements: 8 MiB of int64, a 64 x 16384 batch of ids
BUDGET = 1 << 30  # bytes of shadows alive at once: a script keeping many can't fill the host

_torch = None
_shadows = {}  # id(tensor) -> (weak ref, CPU tensor, the tensor's _version then, its bytes)
_held = [0]  # bytes of the shadows in _shadows
_placeholders = []  # weak refs to host zeros (tensors, numpy arrays) standing for data the trace has not
PLACEHOLDERS_MAX = 4096  # the newest kept; an older one's memory may be taken for real data
_domains = {}  # id(tensor) -> (weak ref, its possible values: sorted, distinct, on the host, _version then)
DOMAIN_MAX = 1 << 12  # distinct values a domain keeps (a label set, feature levels)


def setup(torch):
    global _torch
    _torch = torch


def shadow(t):
    """t's values as a CPU tensor, or None when not known."""
    e = _shadows.get(id(t))
    if e is None or e[0]() is not t:
        return None
    try:
        if not _current(t, e[2], e[4]):
            _drop(id(t))  # written since, by an op that was not followed
            return None
    except Exception:
        return None
    return e[1]


def values(t):
    """t's values as (nested) Python numbers, or None when not known."""
    s = shadow(t)
    return None if s is None else s.tolist()


def _current(t, version, written):
    # an op writing into t (copy_, add_, a collective) is followed in the
    # dispatch mode, below the autograd layer that bumps t's version after
    # it returns: its values are for that next version (and for this one,
    # where nothing bumps it, a C++ kernel's own write)
    v = t._version
    return v == version or written and v == version - 1


def keep(t, v, written=False):
    """Give meta tensor t the values v (a CPU tensor, or Python numbers
    shaped as t); written: the op making them wrote into t (in place)."""
    if not getattr(t, "is_meta", False) or t.numel() > MAX:
        return
    try:
        s = v if isinstance(v, _torch.Tensor) else _torch.tensor(v, dtype=t.dtype)
        if s.device.type != "cpu" or s.numel() != t.numel():
            return
        if tuple(s.shape) != tuple(t.shape):
            s = s.reshape(t.shape)
        key = id(t)
        _drop(key)
        size = s.numel() * s.element_size()
        if _held[0] + size > BUDGET:
            return  # over the budget: these values stay unknown
        # the entry goes with the tensor (the callback runs before its id
        # can be reused)
        _shadows[key] = (weakref.ref(t, lambda r, k=key: _drop(k)), s, t._version + bool(written), size, written)
        _held[0] += size
    except Exception:
        pass


def to_host(dst, src):
    """Host tensor dst takes meta tensor src's values: True when known,
    else dst is zeros (False)."""
    v = shadow(src)
    with _torch.no_grad():
        if v is not None and v.numel() == dst.numel():
            dst.copy_(v.reshape(dst.shape))
            return True
        dst.zero_()
    return False


def _drop(key):
    e = _shadows.pop(key, None)
    if e is not None:
        _held[0] -= e[3]


def domain(t):
    """The values t can hold, sorted and distinct, or None when not known.
    Found for a tensor with known values once per version (unique() of a
    million elements is not free)."""
    e = _domains.get(id(t))
    if e is not None and e[0]() is t and _current(t, e[2], e[3]):
        return e[1]
    s = shadow(t)
    if s is None or not s.numel():
        return None
    d = s.unique()
    _keep_domain(t, d)
    return d


def _keep_domain(t, d, written=False):
    if d is None or not getattr(t, "is_meta", False) or d.numel() > DOMAIN_MAX:
        return
    key = id(t)
    try:
        _domains[key] = (weakref.ref(t, lambda r, k=key: _domains.pop(k, None)), d, t._version + bool(written),
                         written)
    except TypeError:
        pass


# Views, copies and selections: their outputs hold values of their inputs.
SELECTIONS = frozenset(["view", "_unsafe_view", "_reshape_alias", "reshape", "expand", "permute", "transpose", "t", "squeeze",
                        "unsqueeze", "select", "slice", "narrow", "unbind", "split", "split_with_sizes", "chunk",
                        "alias", "detach", "clone", "contiguous", "_to_copy", "flatten", "repeat", "roll", "flip",
                        "index_select", "gather", "index", "masked_select", "cat", "stack", "repeat_interleave",
                        "lift_fresh", "lift_fresh_copy"])

# Ops whose output holds values of their first input (or, cat/stack, of
# their inputs'): the selections, and sorts.
DOMAIN_OPS = SELECTIONS | frozenset(["take", "sort"])


def _domain_op(base, args, outs):
    src = args[0] if args else None
    if base in ("cat", "stack") and isinstance(src, (list, tuple)):
        ds = [domain(x) for x in src if _is_meta(x)]
        if not ds or any(d is None for d in ds):
            return
        d = _torch.cat(ds).unique()
    elif _is_meta(src):
        d = domain(src)
    else:
        return
    if d is None:
        return
    for o in outs if base != "sort" else outs[:1]:
        _keep_domain(o, d.to(o.dtype).unique() if d.dtype != o.dtype else d)


def mark_placeholder(t):
    """t (a host tensor or numpy array) is zeros standing for device data
    the trace has not: moved back to the device, directly or through
    torch.from_numpy / .numpy() (the same memory), it is no known value."""
    try:
        _placeholders[:] = [r for r in _placeholders if r() is not None][-(PLACEHOLDERS_MAX - 1):]
        _placeholders.append(weakref.ref(t))
    except TypeError:
        pass


def _placeholder_memory(x):
    """x's data is a placeholder's: the same tensor, or memory one holds."""
    p = x.data_ptr()
    for r in _placeholders:
        h = r()
        if h is None:
            continue
        if isinstance(h, _torch.Tensor):
            start, size = h.data_ptr(), h.numel() * h.element_size()
        else:
            start, size = h.__array_interface__["data"][0], h.nbytes
        if start <= p < start + max(size, 1):
            return True
    return False


# ATen ops that make known values from nothing but their arguments.
FACTORIES = frozenset(["ones", "zeros", "full", "arange", "ones_like", "zeros_like", "full_like", "scalar_tensor",
                       "new_ones", "new_zeros", "new_full", "eye", "linspace", "tril_indices", "triu_indices"])

# ATen ops whose outputs' values follow from their inputs' (cheap on the
# host at MAX elements); in-place forms (name_) too.
OPS = SELECTIONS | frozenset([
    # more shape ops
    "copy", "unflatten", "diff", "constant_pad_nd", "tril", "triu", "nonzero",
    # comparisons and logic
    "eq", "ne", "lt", "le", "gt", "ge", "isin", "logical_not", "logical_and", "logical_or", "logical_xor",
    "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "where", "masked_fill", "fill", "zero",
    # arithmetic
    "add", "sub", "rsub", "mul", "div", "floor_divide", "remainder", "fmod", "neg", "abs", "clamp", "clamp_min",
    "clamp_max", "minimum", "maximum", "sign",
    # elementwise maths (torchvision's AnchorGenerator: sqrt of the aspect
    # ratios, round of the base anchors)
    "sqrt", "rsqrt", "round", "floor", "ceil", "trunc", "exp", "log", "log2", "pow", "reciprocal",
    # reductions, orders, counts
    "all", "any", "_is_all_true", "_is_any_true", "sum", "prod", "min", "max", "amin", "amax", "argmax", "argmin",
    "cumsum", "cumprod",
    "count_nonzero", "sort", "argsort", "unique_consecutive", "_unique2", "bincount", "searchsorted",
    "bucketize", "scatter", "scatter_add",
])

# Ops through which a host tensor's values enter the device.
SOURCES = frozenset(["_to_copy", "copy", "lift_fresh", "lift_fresh_copy"])


def _is_meta(x):
    return isinstance(x, _torch.Tensor) and x.is_meta


def _outputs(out):
    return [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if _is_meta(o)]


def _host(x, meta_to_shadow):
    """x with every meta tensor (in lists too) replaced by its shadow, or
    by None when one has none; device arguments made the CPU."""
    if isinstance(x, _torch.Tensor):
        return meta_to_shadow(x) if x.is_meta else x
    if isinstance(x, (list, tuple)):
        return type(x)(_host(v, meta_to_shadow) for v in x)
    if isinstance(x, _torch.device) and x.type == "meta":
        return _torch.device("cpu")
    return x


class _Missing(Exception):
    pass


def _need(t):
    s = shadow(t)
    if s is None:
        raise _Missing()
    return s


def _template(t):
    return _torch.zeros(t.shape, dtype=t.dtype)


def _cpu_kwargs(kwargs):
    k = dict(kwargs)
    if "device" in k:
        k["device"] = _torch.device("cpu")
    return k


def after_op(func, name, args, kwargs, out):
    """Give the op's meta outputs the values that follow from its inputs'."""
    outs = _outputs(out)
    if not outs or all(o.numel() > MAX for o in outs):
        return
    base = name[:-1] if name.endswith("_") and not name.startswith("_") else name
    try:
        if base in FACTORIES:
            res = func(*_host(args, _template), **_cpu_kwargs(kwargs))
        elif base == "copy" and len(args) > 1:
            # copy_(dst, src): dst takes src's values, from the host or the device
            src = args[1]
            s = shadow(src) if _is_meta(src) else (src if _host_values(src) else None)
            if s is None:
                return
            res = s.to(outs[0].dtype).expand(outs[0].shape).clone()
        elif base in SOURCES and args and _host_values(args[0]):
            res = func(*_host(args, _need), **_cpu_kwargs(kwargs))
        elif base in OPS and (_shadows or _domains):
            res = func(*_host(args, _need), **_cpu_kwargs(_host(kwargs, _need)))
        else:
            return
    except _Missing:
        if (_shadows or _domains) and base in DOMAIN_OPS:
            _domain_op(base, args, outs)
        elif base in ABSORBING and _shadows:
            _absorbed(base, args, outs)
        return
    except Exception:
        return  # a shape the host op refuses: the values stay unknown
    for o, r in zip(outs, _outputs_cpu(res, len(outs))):
        keep(o, r, _written(o, args, kwargs))


def from_data(func, args, kwargs, out):
    """torch.tensor(data, device=GPU) (as_tensor, asarray): the meta
    tensor made of Python numbers or an array has their values
    (transformers' vision position ids read back
    torch.tensor([merge_size], device=grid.device).tolist()). A tensor's
    values enter through _to_copy (SOURCES) instead."""
    if not _is_meta(out) or out.numel() > MAX or (args and isinstance(args[0], _torch.Tensor)):
        return
    try:
        keep(out, func(*args, **dict(_cpu_kwargs(kwargs), dtype=out.dtype)))
    except Exception:
        pass  # data the host cannot make (meta tensors in a list): unknown


# Boolean ops whose result one known operand decides: x | True is True,
# x & False is False, whatever x holds. Generation's stopping criteria
# (transformers: is_done = is_done | criterion(...), unfinished &= ~is_done)
# combine a known max-length test with an end-of-sequence test of tokens
# the trace does not know: the known one ends the loop at max_new_tokens,
# where a placeholder False would run it forever.
ABSORBING = {"bitwise_or": True, "logical_or": True, "bitwise_and": False, "logical_and": False}


def _absorbed(base, args, outs):
    """Known values for an op of ABSORBING whose other operand is not
    known: all True for an or with an all-True operand (bool results), all
    zero for an and with an all-zero operand (the long `unfinished &
    ~is_done` too)."""
    o = outs[0]
    value = ABSORBING[base]
    if o.numel() > MAX or (value and o.dtype != _torch.bool):
        return
    for a in args[:2]:
        if isinstance(a, (bool, int)):
            s = _torch.tensor(a)
        else:
            s = shadow(a) if _is_meta(a) else (a if _host_values(a) else None)
        if s is not None and s.numel() > 0 and bool((s.to(_torch.bool) == value).all()):
            keep(o, _torch.full(tuple(o.shape), value, dtype=o.dtype), _written(o, args, {}))
            return


def _written(o, args, kwargs):
    """Whether output o is one of the op's tensor arguments (in place, out=)."""
    return any(a is o for a in args) or any(a is o for a in kwargs.values())


def _outputs_cpu(res, n):
    if isinstance(res, (tuple, list)):
        return [r for r in res if isinstance(r, _torch.Tensor)][:n]
    return [res]


def _host_values(x):
    """x is a host tensor with real data that can enter the device with its
    values: not a placeholder, small enough."""
    return isinstance(x, _torch.Tensor) and not x.is_meta and x.device.type == "cpu" and \
        x.numel() <= MAX and not _placeholder_memory(x)
