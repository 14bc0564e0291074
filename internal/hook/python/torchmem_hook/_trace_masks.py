"""Data-dependent shapes on the meta device, for the one kind a training
step's memory hangs on: a mixture of experts routes each token to its
top-k experts, then gathers each expert's tokens with torch.where(mask) or
nonzero(), whose row count is in the data, which meta tensors do not
have (transformers' Mixtral, Qwen2-MoE, OLMoE, ... blocks). The tracer
takes the counts a balanced router gives, as the built-in estimator does:
F.one_hot(selected, num_experts) has 1/num_experts of its elements true,
and a view or a selection of it (permute, an expert's slice, squeeze) the
same fraction, so one expert's torch.where finds tokens * top_k /
num_experts rows. nonzero of any other mask takes every element: the most
it can be, as masked_select does (a boolean-mask index of valid tokens, the
experts hit at all). The indices of an all-true mask are known, so they
are kept as values: a loop over the experts hit (`for e in expert_hit:
self.experts[e]`) then runs each expert, not expert 0 every time (a
placeholder read), and each expert's weights get their gradients and
optimizer states.

Routers that compare indices instead of one-hot masks (DeepSeek-MoE's
`y[flat_topk_idx == i] = expert(x[flat_topk_idx == i])`, MiniMind's
`mask = topk_idx == i; if mask.any(): ...`), or count them (`bincount`,
`histc`, `scatter`/`scatter_` of ones then `sum`, then `.cpu().numpy()` or
`.tolist()` to split the sorted tokens) get the same balanced share: the
indices top-k (max, argmax) returns over n choices are marked as routing
indices, each value as often; `idx == i` is a mask with 1/n of its elements
true, its `any(dim)` over k distinct choices k/n, its `any()` true, and
counts of them are known values (tokens * k / n each), which a host copy,
`tolist()` and `repeat_interleave` read.

Where the values themselves are known (_trace_values: a shadow on the
host), sizes are exact and nothing is assumed."""

import math
import weakref

from torchmem_hook import _trace_values
from torchmem_hook._trace_values import shadow

KIND = "datashape"  # the trace's W line for an assumed size
# The rule that sized it, the W line's last field (estimate.Shape*, one
# name each: the report counts the notes by rule).
ROUTER, KNOWN, MOST, MINLENGTH, SAMPLED = "router", "known", "most", "minlength", "sampled"
# A count of a mask of unknown values taken as all of it (_unknown_mask):
# not a size, so a note of its own kind (an accuracy's `(pred == y).sum()`
# is one; "a size was assumed" would say more than happened).
COUNTED, COUNT_KIND = "counted", "maskcount"


def kind_of(rule):
    """The W line's kind for a note of rule."""
    return COUNT_KIND if rule == COUNTED else KIND

_density = {}  # id(tensor) -> (weak ref, fraction of its elements that are true)
_classes = {}  # id(tensor) -> (weak ref, n): routing indices over n choices, each as often
_sampled_masks = {}  # id(tensor) -> (weak ref, its version): a density from the indices a sampler put
_empty = {}  # id(tensor) -> (weak ref, its version): a mask made all zeros, a sampler's to be
_all_true = {}  # id(tensor) -> (weak ref, its version): a health check's mask, all true in a run that trains
_none_true = {}  # id(tensor) -> (weak ref, its version): one none true (isnan's)


def density(t):
    """The fraction of t's elements taken to be true (1 when not known)."""
    d = _density.get(id(t))
    if d is not None and d[0]() is t and not _stale(t):
        return d[1]
    return 1.0


def _version(t):
    return getattr(t, "_version", -1)


def _fresh(table, t):
    """t is in table and not written since: the tensor's version counter,
    which every in-place write bumps, through any view of it too (an
    in-place op's own bump comes after the dispatch mode has seen it:
    _sample counts it)."""
    e = _get(table, t)
    return e is not None and _version(t) == e[1]


def _stale(t):
    """A sampled mask written since its density was taken."""
    e = _get(_sampled_masks, t)
    return e is not None and _version(t) != e[1]


def _put(table, t, v):
    key = id(t)
    try:
        # the entry goes with the tensor (the callback runs before its id
        # can be reused)
        table[key] = (weakref.ref(t, lambda r, k=key: table.pop(k, None)), v)
    except TypeError:
        pass


def _get(table, t):
    e = table.get(id(t))
    if e is not None and e[0]() is t:
        return e
    return None


def _tag(t, d):
    _put(_density, t, d)


def _known(t):
    return _get(_density, t) is not None and not _stale(t)


def classes(t):
    """n when t holds routing indices over n choices (top-k's), else None."""
    e = _get(_classes, t)
    return None if e is None else e[1]


def balanced(count, n):
    """count indices over n choices, each as often: the first count % n
    one more, so that they add up (a split by them covers every row)."""
    return [count // n + (1 if i < count % n else 0) for i in range(n)]


def install(torch, T, answers, PASS):
    """Add to answers (the function mode's func -> handler(func, args,
    kwargs), where a handler returns PASS to let the call run) what marks
    routing masks (one_hot) and carries known values through views and
    reads; nothing outside meta mode. after_op carries the marks; the
    dispatch fallback nonzero() sizes from them."""
    if T.device != "meta":
        return
    F = torch.nn.functional
    Tensor = torch.Tensor

    def one_hot(func, args, kwargs):
        x = args[0]
        n = kwargs.get("num_classes", args[1] if len(args) > 1 else -1)
        if not isinstance(n, int) or n <= 0 or not x.is_meta:
            return PASS
        # as CUDA makes it (torch 1.13's one_hot reads min() first, which
        # meta cannot): zeros, then scatter_ of ones
        out = torch.zeros(tuple(x.shape) + (n,), dtype=torch.long, device=x.device)
        out.scatter_(-1, x.unsqueeze(-1), 1)
        _tag(out, 1.0 / n)
        return out

    def read(prev):
        # a read of a tensor whose values are known answers from them
        # (.item(), bool(), .tolist(), f-strings, `x in t`, numpy)
        def h(func, args, kwargs):
            s = shadow(args[0]) if args and isinstance(args[0], torch.Tensor) else None
            if s is None:
                return prev(func, args, kwargs) if prev is not None else PASS
            return func(s, *args[1:], **kwargs)
        return h

    def host(prev):
        # .cpu() / .to("cpu") of known values (a router's counts, a mask)
        # is a host tensor that has them: .numpy().cumsum(0) and the loop
        # over its slices then run as on a GPU
        def h(func, args, kwargs):
            t = args[0] if args else None
            # (a host placeholder, zeros DeepSpeed's offload made, is on the
            # host already: prev answers it as itself)
            s = shadow(t) if isinstance(t, torch.Tensor) and t.is_meta and not T.is_host(t) else None
            if s is not None and func is Tensor.to:
                d = kwargs.get("device", args[1] if len(args) > 1 else None)
                if str(d) != "cpu":
                    s = None
            if s is None:
                return prev(func, args, kwargs) if prev is not None else PASS
            return s.clone()
        return h

    _trace_values.setup(torch)
    out = {F.one_hot: one_hot}

    def repeat_interleave(func, args, kwargs):
        # the output's size is in the repeats: known for an int, or for
        # counts whose values are known (meta refuses without output_size;
        # torch 1.13 even for an int)
        x = args[0] if args else kwargs.get("input")
        if not isinstance(x, torch.Tensor) or not x.is_meta or kwargs.get("output_size") is not None:
            return PASS
        reps = args[1] if len(args) > 1 else kwargs.get("repeats")
        dim = args[2] if len(args) > 2 else kwargs.get("dim")
        if reps is None:  # repeat_interleave(counts): each index counts[i] times
            s = shadow(x)
            total = None if s is None else int(s.sum())
        else:
            s = shadow(reps) if isinstance(reps, torch.Tensor) else torch.tensor([reps])
            n = x.numel() if dim is None else x.shape[dim]
            if s is None:
                total = None
            elif s.numel() == 1:  # one count for every element
                total = int(s.reshape(-1)[0]) * n
            else:
                total = int(s.sum())
        if total is None:
            return PASS
        kwargs = dict(kwargs)
        kwargs["output_size"] = int(total)
        return func(*args, **kwargs)

    out[Tensor.repeat_interleave] = repeat_interleave
    out[torch.repeat_interleave] = repeat_interleave
    for f in (Tensor.item, Tensor.__index__, Tensor.__int__, Tensor.__bool__, Tensor.__float__, Tensor.tolist,
              Tensor.__format__, Tensor.__contains__, Tensor.numpy, Tensor.__array__):
        out[f] = read(answers.get(f))
    for f in (Tensor.cpu, Tensor.to):
        out[f] = host(answers.get(f))
    answers.update(out)


# The ATen ops that keep a mask's share of true elements in what they
# return: views, selections, copies. The dispatch mode carries marks
# through them (torch 1.13's function mode never sees indexing).
KEEP_OPS = frozenset(["permute", "index", "squeeze", "unsqueeze", "view", "_unsafe_view", "reshape", "clone",
                      "select", "slice", "expand", "transpose", "t", "alias", "unbind", "split", "chunk",
                      "narrow", "_to_copy", "detach", "contiguous"])


_names = {}  # op overload -> (its aten name, its overload name); str(op) is slow


def _domain_eq(args, out):
    """x == v, v one of the m values x holds (its domain): 1/m of its
    elements true, each value as often (a balanced share)."""
    d = _trace_values.domain(args[0])
    v = args[1] if len(args) > 1 else None
    if hasattr(v, "is_meta"):
        sv = shadow(v) if v.is_meta else v
        v = sv.item() if sv is not None and sv.numel() == 1 else None
    if isinstance(v, (int, float)) and bool((d == v).any()):
        _tag(out, 1.0 / d.numel())


def op_name(func):
    r = _names.get(func)
    if r is None:
        op = str(func)
        r = (op.split(".")[1], op.split(".")[-1]) if op.startswith("aten.") else ("", "")
        _names[func] = r
    return r


def _dim(args, i, default):
    d = args[i] if len(args) > i else default
    return d[0] if isinstance(d, (list, tuple)) and len(d) == 1 else d


def _reduced(x, dims):
    """How many elements of x each output element of a reduction over
    dims (None: all) reads."""
    if dims is None:
        return x.numel()
    n = 1
    for d in dims if isinstance(dims, (list, tuple)) else (dims,):
        n *= x.shape[d]
    return n


def after_op(func, args, out):
    """Carry marks from an op's first input to its outputs, and make new
    ones: routing indices (top-k), masks of them (==), counts of them.
    Returns (op, rule, words) for the trace's W line when it made counts a
    balanced router was assumed for, else None."""
    if not args or not getattr(out, "is_meta", True):
        return
    name, overload = op_name(func)
    if name in MASK_READS or name in NOT_OPS or (_all_true or _none_true) and name in KEEP_OPS:
        r = _unknown_mask(name, args, out)
        if r is not False:
            return r
    if not (_density or _classes or _empty) and name not in ROUTE_OPS and name != "eq" and name not in MASK_ZEROS:
        return  # nothing marked yet: the common case, kept cheap
    if name in MASK_ZEROS:
        if getattr(out, "dtype", None) in _mask_dtypes(out):
            _put(_empty, out, _version(out))  # a mask made empty, to be marked (a sampler's)
        return
    src = args[0]
    if name in SAMPLED_OPS or name in OR_OPS or name == "cat":
        return _sampled(name, args, out)
    if name == "eq" and shadow(src) is None and _trace_values.domain(src) is not None:
        _domain_eq(args, out)
        return
    if name in ROUTE_OPS and getattr(src, "dim", lambda: 0)() > 0:
        _route(name, overload, args, out)
        return
    n = classes(src)
    if n is not None:
        if name in KEEP_OPS:
            for o in out if isinstance(out, (tuple, list)) else (out,):
                if hasattr(o, "is_meta"):
                    _put(_classes, o, n)
        elif name in ("eq", "ne") and overload == "Scalar" and isinstance(args[1], int) and 0 <= args[1] < n:
            _tag(out, 1.0 / n if name == "eq" else 1.0 - 1.0 / n)
        elif name == "histc" and _dim(args, 1, 100) == n:
            _trace_values.keep(out, balanced(src.numel(), n))
            return "histc", ROUTER, "%d routing indices over %d choices taken as balanced: a balanced router's counts" % (
                src.numel(), n)
        return None
    if name in ("scatter_", "scatter") and overload == "value" and len(args) > 3 and args[3] == 1 \
            and classes(args[2]) is not None:
        # counts of routing indices: zeros, then a scatter of ones at them
        # (in place, or GraniteMoE's out-of-place zeros.scatter(1, idx, 1))
        dim, index = args[1], args[2]
        if classes(index) == src.shape[dim]:
            _tag(src if name == "scatter_" else out, min(1.0, float(index.shape[dim]) / src.shape[dim]))
        return
    if not _known(src):
        return
    d = density(src)
    if name in KEEP_OPS:
        for o in out if isinstance(out, (tuple, list)) else (out,):
            if hasattr(o, "is_meta"):
                _tag(o, d)
    elif name == "any" and overload != "default":
        # over k distinct choices a token takes each with 1/n: k/n
        _tag(out, min(1.0, d * _reduced(src, _dim(args, 1, None))))
    elif name == "any":
        _trace_values.keep(out, rows(src) > 0)
    elif name == "sum" and out.numel() <= _trace_values.MAX:
        count = d * _reduced(src, None if overload == "default" else _dim(args, 1, None))
        v = int(math.ceil(count)) if not out.is_floating_point() else count
        _trace_values.keep(out, [v] * out.numel())
        if d < 1:
            return "sum", ROUTER, "%s counts of a mask of %d elements taken as %s each: a balanced router's share" % (
                out.numel(), src.numel(), v)
    return None


# A sampler's masks (torchvision's BalancedPositiveNegativeSampler, the
# RPN's and the box head's): zeros_like(labels, dtype=uint8), then 1 put at
# the sampled indices (mask[idx] = 1), the two masks or-ed and
# torch.where(pos | neg) taken: each mask has at most as many true elements
# as indices were put, so where finds at most their sum (512 per image,
# not every proposal). A put of L indices into a mask made empty adds
# L / numel, an or adds the two, a cat averages. Only while nothing else
# wrote the masks (their version counters say): a mask also filled another
# way, through a view too, is taken as all true again.
MASK_ZEROS = frozenset(["zeros_like", "zeros", "new_zeros"])
SAMPLED_OPS = frozenset(["index_put_", "index_put", "_index_put_impl_"])
OR_OPS = frozenset(["bitwise_or", "logical_or", "bitwise_or_", "logical_or_"])


# A count of a mask whose values are not known (a comparison of the
# model's outputs: an assigner's foreground mask) counts it as the most
# rule sizes it, every element true: `if fg_mask.sum():` takes the branch
# whose boolean index of the same mask was sized for all of it
# (Ultralytics' box loss; a placeholder 0 skipped it, and its head's
# gradients). any() and all() of such a mask stay unknown: they are
# stopping tests as often (a generation loop's `isin(last, eos).any()`
# would stop at its first token, the least memory, where a GPU run that
# never meets the end token goes on). A health check's mask is as in a run
# that trains, for all four reads: isnan's and isinf's none true (`if
# torch.isnan(loss).any():` skips no step), isfinite's all true, a not of
# one the other. (Marked where the program calls them, _trace_api._checks:
# ATen makes them of comparisons, which the dispatch mode sees instead.)
NOT_OPS = frozenset(["bitwise_not", "logical_not"])
MASK_READS = frozenset(["sum", "any", "all", "count_nonzero"])


def healthy(t, finite):
    """t is a health check's mask: isfinite's (finite), else isnan's or
    isinf's."""
    _put(_all_true if finite else _none_true, t, _version(t))


def _unknown_mask(name, args, out):
    """after_op for a not or view of a health check's mask, and a read of
    a mask of unknown values: (op, rule, words) for a count assumed, None
    when done, False when not such a mask (after_op goes on)."""
    src = args[0] if args else None
    if not getattr(src, "is_meta", False) or src.dtype != _trace_values._torch.bool:
        return False
    truth = True if _fresh(_all_true, src) else False if _fresh(_none_true, src) else None
    if name in NOT_OPS or name in KEEP_OPS:
        if truth is None:
            return False
        if name in NOT_OPS:
            truth = not truth
        for o in out if isinstance(out, (tuple, list)) else (out,):
            if getattr(o, "is_meta", False):
                _put(_all_true if truth else _none_true, o, _version(o))
        return None
    if shadow(src) is not None or _known(src) or _fresh(_empty, src) or out.numel() > _trace_values.MAX:
        return False  # its values, a router's share, a sampler's mask to be: after_op's
    if truth is None and name in ("any", "all"):
        return False
    if name in ("sum", "count_nonzero"):
        dims = _dim(args, 1, None)
        n = _reduced(src, dims) if truth is not False else 0
        _trace_values.keep(out, [n] * out.numel())
    else:  # any, all: an empty all is true
        _trace_values.keep(out, [truth is not False or (name == "all" and src.numel() == 0)] * out.numel())
    if truth is None:
        return name, COUNTED, "a mask of %d elements counted as all true: the most it can be" % src.numel()
    return None


def _mask_dtypes(t):
    torch = _trace_values._torch
    return (torch.bool, torch.uint8) if torch is not None else ()


def _sampled(name, args, out):
    inplace = name.endswith("_")
    if name in SAMPLED_OPS:
        src, indices = args[0], args[1] if len(args) > 1 else None
        if not isinstance(indices, (list, tuple)) or len(indices) != 1 or src.numel() == 0:
            return None
        idx = indices[0]
        if idx is None or idx.dtype in _mask_dtypes(idx):
            return None  # a boolean-mask put: how many it sets is in the data
        if _fresh(_empty, src):
            base = 0.0
        elif _fresh(_sampled_masks, src):
            base = _get(_density, src)[1]
        else:
            return None
        _sample(src if inplace else out, min(1.0, base + float(idx.numel()) / src.numel()), inplace)
    elif name in OR_OPS:
        a, b = args[0], args[1] if len(args) > 1 else None
        if _fresh(_sampled_masks, a) and hasattr(b, "is_meta") and _fresh(_sampled_masks, b):
            _sample(a if inplace else out, min(1.0, _get(_density, a)[1] + _get(_density, b)[1]), inplace)
    else:  # cat
        ts = args[0] if args else []
        if ts and all(_fresh(_sampled_masks, t) for t in ts):
            n = sum(t.numel() for t in ts)
            if n:
                _sample(out, sum(_get(_density, t)[1] * t.numel() for t in ts) / n, False)
    return None


def _sample(t, d, inplace):
    """t's density d, from what a sampler put; an in-place op's bump of
    t's version is still to come."""
    _tag(t, d)
    _put(_sampled_masks, t, _version(t) + (1 if inplace else 0))


# The ops that return routing indices (positions over a dimension of n
# choices): their output index, and the argument index of their dim.
ROUTE_OPS = {"topk": (1, 2), "max": (1, 1), "argmax": (0, 1)}


def _route(name, overload, args, out):
    at, dim_arg = ROUTE_OPS[name]
    if name != "topk" and len(args) <= dim_arg:
        return  # max()/argmax() of everything: not a choice per row
    if name == "max" and overload != "dim":
        return
    idx = out[at] if isinstance(out, (tuple, list)) else out
    if getattr(idx, "is_meta", False):
        _put(_classes, idx, args[0].shape[_dim(args, dim_arg, -1)])


def rows(x):
    """The rows nonzero(x) has (its values known) or is taken to have."""
    s = shadow(x)
    if s is not None:
        return int(s.count_nonzero())
    n = 1
    for s in x.shape:
        n *= s
    return int(math.ceil(n * density(x)))


def ctc_target_length(target_lengths, targets):
    """CTC's longest target (_trace_api's CTC fallbacks): of the lengths
    given as numbers, or as a tensor whose values are known; else the
    most the targets allow, False then as the second value (nothing
    known: data_shaped notes it)."""
    if isinstance(target_lengths, (list, tuple)):
        return max([int(x) for x in target_lengths] or [0]), True
    s = shadow(target_lengths)
    if s is not None:
        return (int(s.max()) if s.numel() else 0), True
    return int(targets.shape[1] if targets.dim() == 2 else targets.numel()), False


def data_shaped(torch, name, args):
    """(op, rule, words) for the W line when the meta fallback of op name sized
    its output from a mask; None for any other fallback."""
    if args and shadow(args[0]) is not None:
        return None  # sized from known values: nothing assumed
    if name in ("aten.nonzero.default", "aten.where.default"):
        return (name.split(".")[1],) + note(args[0])
    if name == "torchvision.nms.default":
        return "nms", MOST, "all %d boxes taken as kept: the most it can be" % args[0].shape[0]
    if name == "aten._ctc_loss.Tensor" and len(args) > 3:
        n, known = ctc_target_length(args[3], args[1])
        if not known:
            return "_ctc_loss", MOST, "target lengths not known: the longest taken as %d, the most the targets allow" % n
        return None
    if name == "aten.bincount.default":
        n = classes(args[0])
        if n is not None:
            return "bincount", ROUTER, "%d routing indices over %d choices taken as balanced: a balanced router's counts" % (
                args[0].numel(), n)
        if len(args) > 2 and args[2]:
            return "bincount", MINLENGTH, "values taken as below its minlength %d: an output of that many counts" % args[2]
        return None
    if name == "aten.unique_consecutive.default":
        return "unique_consecutive", MOST, "all %d elements taken as distinct: the most it can be" % args[0].numel()
    if name == "aten._unique2.default":
        d = _trace_values.domain(args[0])
        if d is not None:
            return "unique", KNOWN, "each of the %d values its %d elements were selected from taken as present" % (
                min(d.numel(), args[0].numel()), args[0].numel())
        return "unique", MOST, "all %d elements taken as distinct: the most it can be" % args[0].numel()
    if name.startswith(("aten.index.", "aten.index_put", "aten._index_put_impl_")) and len(args) > 1:
        for i in args[1]:
            if i is not None and getattr(i, "dtype", None) in (torch.bool, torch.uint8) and shadow(i) is None:
                return ("boolean mask index",) + note(i)
    return None


def note(x):
    """(rule, words) of the W line for nonzero(x)."""
    if _get(_sampled_masks, x) is not None:
        return SAMPLED, "%d of %d mask elements taken as true: at most the indices put in it (a sampler's)" % (
            rows(x), x.numel())
    if _known(x):
        return ROUTER, "%d of %d mask elements taken as true: a balanced router's share" % (rows(x), x.numel())
    return MOST, "all %d mask elements taken as true: the most it can be" % x.numel()


def nonzero(torch, x, *a, **k):
    """aten.nonzero on meta: (rows, x.dim()) int64 indices; those of a
    mask whose values are known, or of an all-true one, are known, and
    kept."""
    out = torch.empty((rows(x), x.dim()), dtype=torch.long, device=x.device)
    s = shadow(x)
    if s is None and not _known(x) and x.numel() <= _trace_values.MAX:
        s = torch.ones(tuple(x.shape), dtype=torch.bool)
    if s is not None:
        _trace_values.keep(out, s.nonzero())
    return out


def where(torch, cond, *a, **k):
    """aten.where(cond), one argument (numpy's nonzero; yolov5's
    validation matches its detections with it): nonzero's rows, one view
    of them per dimension, as the GPU makes them."""
    return tuple(nonzero(torch, cond).unbind(1))


def _int_indices(torch, indices):
    """Boolean-mask indices as the integer ones they stand for (a GPU's
    index kernel runs nonzero on them inside, which meta cannot)."""
    out = []
    for i in indices:
        if i is not None and i.dtype in (torch.bool, torch.uint8):
            out.extend(nonzero(torch, i).unbind(1))
        else:
            out.append(i)
    return out


def index(torch, x, indices):
    """aten.index.Tensor with a boolean mask on meta (x[valid])."""
    return torch.ops.aten.index.Tensor(x, _int_indices(torch, indices))


def index_put(torch, x, indices, values, accumulate=False, *a, **k):
    """aten.index_put with a boolean mask on meta (the index's backward)."""
    return torch.ops.aten.index_put.default(x, _int_indices(torch, indices), values, accumulate)


def index_put_(torch, x, indices, values, accumulate=False, *a, **k):
    return torch.ops.aten.index_put_.default(x, _int_indices(torch, indices), values, accumulate)


def index_put_impl_(torch, x, indices, values, accumulate=False, unsafe=False, *a, **k):
    return torch.ops.aten._index_put_impl_.default(x, _int_indices(torch, indices), values, accumulate, unsafe)


def unique(torch, x, sorted=True, return_inverse=False, return_counts=False, *a, **k):
    """aten._unique2 on meta (torch.unique: torchvision's batched_nms, label
    sets): of known values, theirs; of values selected from known ones,
    every one of those (the values are then known); else every element
    distinct, the most it can be, as for masks."""
    s, d = shadow(x), _trace_values.domain(x)
    n = x.numel() if d is None else min(x.numel(), int(d.numel()))
    inv = torch.empty(tuple(x.shape) if return_inverse else (0,), dtype=torch.long, device=x.device)
    counts = torch.empty((n,) if return_counts else (0,), dtype=torch.long, device=x.device)
    out = torch.empty((n,), dtype=x.dtype, device=x.device)
    if s is None and d is not None:
        _trace_values.keep(out, d[:n].to(x.dtype))
    return out, inv, counts


def unique_consecutive(torch, x, return_inverse=False, return_counts=False, dim=None, *a, **k):
    """aten.unique_consecutive on meta (no meta kernel; Qwen2.5-VL's vision
    windows: torch.unique_consecutive(cu_window_seqlens)): of known values,
    theirs (values then known: _trace_values.OPS); else every element
    distinct. The CUDA kernel makes its output and counts input-sized and
    resizes them down, so their storages stay input-sized, as here."""
    if dim is not None:
        raise NotImplementedError("unique_consecutive over a dimension on meta")
    s = shadow(x)
    n = x.numel() if s is None else int(torch.unique_consecutive(s).numel())
    inv = torch.empty(tuple(x.shape) if return_inverse else (0,), dtype=torch.long, device=x.device)
    out = torch.empty((x.numel(),), dtype=x.dtype, device=x.device).resize_(n)
    counts = torch.empty((x.numel() if return_counts else 0,), dtype=torch.long, device=x.device)
    if return_counts:
        counts.resize_(n)
    return out, inv, counts


def bincount(torch, x, weights=None, minlength=0, *a, **k):
    """aten.bincount on meta: of routing indices, a balanced router's
    counts, known (a host copy of them splits the sorted tokens); of known
    values, their counts. Other values it cannot size."""
    n, s = classes(x), shadow(x)
    if s is not None:
        counts = s.bincount(minlength=minlength).tolist()
    elif n is not None:
        counts = balanced(x.numel(), n) + [0] * max(0, minlength - n)
    elif minlength > 0:
        # values taken as below minlength: a confusion matrix's
        # bincount(n * target + prediction, minlength=n * n), a histogram
        # of class ids (the size is all that is known, not the counts)
        counts = None
    else:
        raise NotImplementedError("bincount of values a tensor without data does not have (its size is the largest value)")
    dtype = torch.long if weights is None else (weights.dtype if weights.is_floating_point() else torch.double)
    out = torch.empty((minlength if counts is None else len(counts),), dtype=dtype, device=x.device)
    if weights is None and counts is not None:
        _trace_values.keep(out, counts)
    return out


def histc(torch, x, bins=100, *a, **k):
    """aten.histc on meta (torch 1.13 has no kernel): bins counts, their
    values after_op's when x are routing indices."""
    return torch.empty((bins,), dtype=x.dtype, device=x.device)


# Ops whose meta kernel refuses with a RuntimeError (their output size is
# in the data) rather than a NotImplementedError; their fallbacks run too.
REFUSED_ON_META = frozenset(["torchvision.nms.default"])


def nms(torch, boxes, scores, iou_threshold, *a, **k):
    """torchvision::nms on meta: every box kept, the most it can be (the
    callers cut the result to their top-n: the RPN's post_nms_top_n, the
    detections per image)."""
    return torch.empty((boxes.shape[0],), dtype=torch.long, device=boxes.device)
