"""Sparse COO tensors on meta (torchmem estimate --trace, meta mode).

nn.Embedding and nn.EmbeddingBag with sparse=True (DLRM's tables, word2vec,
recommenders) give sparse COO gradients: indices (sparse dims x nnz, int64)
and values (nnz x the row). PyTorch's meta kernels for sparse tensors are
few and do not follow nnz (clone makes nnz 0, add_ leaves it as it was;
add_ into a dense tensor, mul, coalesce and sparse_mask raise), so every
op on a sparse meta tensor that makes or changes indices or values is
taken here, its outputs sized as the CUDA kernels size them
(aten/src/ATen/native/sparse/cuda/SparseCUDATensorMath.cu and
SparseCUDATensor.cu), the scratch they take from the caching allocator
recorded as temporaries.

Python cannot give a sparse meta tensor new indices and values in place,
which is what gradient accumulation's add_ does: the parts such a tensor
has now are kept here (_now), and the ops that read them (_values,
_indices, _nnz, detach) answer from here. Only those: a reference here to
parts a tensor holds itself would count as a use of them, and autograd
copies a gradient whose parts something else uses rather than take it.
"""

import weakref

from torchmem_hook import _common, _trace_masks
from torchmem_hook._trace_values import shadow

_now = {}  # id(sparse tensor) -> (weak ref, indices, values)
# The rows an embedding's sparse gradient touched, where the lookup's
# indices had known values: by the storage of the gradient's indices (the
# lookup's own, viewed; autograd re-wraps the gradient, a later add_ or
# coalesce reads it by its parts) -> (its bytes, the distinct rows). A
# storage freed and another made at its address is told by its bytes;
# the next lookup's gradient, the same size, says its own.
_rows = {}

# The embedding backwards that make a sparse gradient (sparse=True); the
# lookup's indices are their second argument, padding_idx: where it is.
EMBEDDING_BACKWARDS = {"embedding_backward": 3, "embedding_sparse_backward": 3,
                       "_embedding_bag_backward": 11, "_embedding_bag_sparse_backward": 9}

# cub's radix sort (thrust::sort_by_key in coalesce) takes a second buffer
# for the keys and one for the values: two int64 per element.
SORT_SCRATCH_PER_ELEMENT = 16


def is_sparse(x):
    return getattr(x, "is_sparse", False) is True


def parts(t):
    """(indices, values) of sparse tensor t as it holds them now."""
    e = _now.get(id(t))
    if e is not None and e[0]() is t:
        return e[1], e[2]
    return t._indices(), t._values()


def _set_parts(t, indices, values):
    k = id(t)

    def gone(r, k=k):
        e = _now.get(k)
        if e is not None and e[0] is r:
            del _now[k]

    _now[k] = (weakref.ref(t, gone), indices, values)


def _storage_of(t):
    """(key, bytes) of t's storage."""
    f = getattr(t, "untyped_storage", None)
    st = f() if f is not None else t._storage()
    return st._cdata, st.nbytes()


def _known_rows(indices, lookup, padding):
    """Note the distinct rows of a sparse gradient with indices, made from
    a lookup of known values (padding_idx's rows get no gradient)."""
    s = shadow(lookup)
    if s is None or s.dtype.is_floating_point:
        return
    u = s.reshape(-1).unique()
    n = int((u != padding).sum()) if padding >= 0 else int(u.numel())
    k = _storage_of(indices)
    _rows[k[0]] = (k[1], n)


def _same_rows(src, dst, n=None):
    """dst: indices with src's distinct rows (a copy; n: coalesced to n)."""
    k = _storage_of(src)
    e = _rows.get(k[0])
    if e is not None and e[0] == k[1]:
        d = _storage_of(dst)
        _rows[d[0]] = (d[1], e[1] if n is None else n)


def _forget(t):
    e = _now.get(id(t))
    if e is not None and e[0]() is t:
        del _now[id(t)]


def _alpha(args, kwargs, i):
    a = kwargs.get("alpha", args[i] if len(args) > i else 1)
    return a.item() if hasattr(a, "item") else a


class Sparse(object):
    """The rules (install: one per tracer). call() answers an op that takes
    or makes a sparse meta tensor, or NotImplemented for the meta kernel."""

    def __init__(self, torch, T):
        self.torch, self.T = torch, T
        self.seen = False  # no sparse tensor yet: no op need be looked at
        self.make_op = torch.ops.aten._sparse_coo_tensor_with_dims_and_tensors.default
        self.embedding_backwards = {}
        for name, pad in EMBEDDING_BACKWARDS.items():
            f = getattr(getattr(torch.ops.aten, name, None), "default", None)
            if f is not None:
                self.embedding_backwards[f] = pad
        self.rules = {
            "aten.add_.Tensor": lambda f, a, k, w: self.add(f, a, k, w, True, 1),
            "aten.add.Tensor": lambda f, a, k, w: self.add(f, a, k, w, False, 1),
            "aten.sub_.Tensor": lambda f, a, k, w: self.add(f, a, k, w, True, -1),
            "aten.sub.Tensor": lambda f, a, k, w: self.add(f, a, k, w, False, -1),
            "aten.mul.Tensor": self.scale, "aten.mul.Scalar": self.scale,
            "aten.div.Tensor": self.scale, "aten.div.Scalar": self.scale,
            "aten.neg.default": self.scale,
            "aten.mul_.Tensor": self.scale_, "aten.mul_.Scalar": self.scale_,
            "aten.div_.Tensor": self.scale_, "aten.div_.Scalar": self.scale_,
            "aten.neg_.default": self.scale_,
            "aten.clone.default": self.clone, "aten._to_copy.default": self.clone,
            "aten.copy_.default": self.copy_,
            "aten.zero_.default": self.zero_,
            "aten._coalesce.default": self.coalesce,
            "aten.sparse_mask.default": self.sparse_mask,
            "aten._to_dense.default": self.to_dense, "aten.to_dense.default": self.to_dense,
            "aten._values.default": self.view_part, "aten.values.default": self.view_part,
            "aten._indices.default": self.view_part, "aten.indices.default": self.view_part,
            "aten._nnz.default": self.nnz,
            "aten.detach.default": self.alias, "aten.alias.default": self.alias,
            "aten.norm.Scalar": self.norm, "aten.norm.ScalarOpt_dim": self.norm,
            "aten.linalg_vector_norm.default": self.norm,
            "aten._foreach_norm.Scalar": self.foreach_norm,
        }

    # -- entry points -------------------------------------------------------

    def call(self, func, args, kwargs, keep):
        """The op's output, or NotImplemented. keep: a list the caller holds
        until the outputs are recorded (the kernel's scratch)."""
        if func is self.make_op:
            out = func(*args, **kwargs)
            self.seen = True
            if len(args) > 4:  # (torch 1.13's composite embedding backward makes it so)
                _known_rows(args[3], args[3], -1)
            return out
        if func in self.embedding_backwards:
            out = func(*args, **kwargs)
            if is_sparse(out):
                self.seen = True
                pad = self.embedding_backwards[func]
                padding = args[pad] if len(args) > pad else kwargs.get("padding_idx", -1)
                _known_rows(parts(out)[0], args[1], -1 if padding is None else int(padding))
            return out
        if not self.seen or not any(is_sparse(x) for x in _common.flat((args, kwargs))):
            return NotImplemented
        rule = self.rules.get(str(func))
        if rule is None:
            return NotImplemented
        return rule(func, args, kwargs, keep)

    # -- helpers ------------------------------------------------------------

    def make(self, indices, values, size, coalesced):
        sd = int(indices.shape[0])
        out = self.make_op(sd, len(size) - sd, list(size), indices, values, dtype=values.dtype,
                           layout=self.torch.sparse_coo, device=values.device, pin_memory=False)
        out._coalesced_(bool(coalesced))
        self.seen = True
        return out

    def temp(self, shape, dtype, device, keep, op):
        """Scratch a kernel takes and frees as it returns."""
        t = self.torch.empty(tuple(shape), dtype=dtype, device=device)
        self.T.on_output(t, op)
        keep.append(t)
        return t

    def _empty(self, shape, like, dtype=None):
        return self.torch.empty(tuple(shape), dtype=dtype or like.dtype, device=like.device)

    def _copies(self, t, dtype=None):
        i, v = parts(t)
        c = self._empty(i.shape, i)
        _same_rows(i, c)
        return c, self._empty(v.shape, v, dtype)

    # -- the rules ----------------------------------------------------------

    def add(self, func, args, kwargs, keep, inplace, sign):
        torch, op = self.torch, str(func)
        t, other = args[0], args[1]
        alpha = _alpha(args, kwargs, 2) * sign
        if not is_sparse(other):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        oi, ov = parts(other)
        common = torch.result_type(t, other)
        if not is_sparse(t):
            # add_out_dense_sparse_cuda: the values index_add_-ed into the
            # dense tensor (a copy of it, out of place); values of another
            # dtype converted first, the indices of several sparse
            # dimensions flattened when not coalesced
            if ov.dtype != common:
                self.temp(ov.shape, common, ov.device, keep, op)
            if other.sparse_dim() > 1 and not other.is_coalesced():
                self.temp((ov.shape[0],), torch.long, ov.device, keep, op)
            return t if inplace else self._empty(t.shape, t, common)
        ti, tv = parts(t)
        n1, n2 = int(tv.shape[0]), int(ov.shape[0])
        dtype = t.dtype if inplace else common
        if n2 == 0:
            if inplace:
                return t
            i, v = self._copies(t, dtype)
            coalesced = t.is_coalesced()
        elif n1 == 0:
            # mul_out_sparse_scalar: other's indices and values copied in
            i, v = self._copies(other, dtype)
            coalesced = other.is_coalesced()
        else:
            # add_out_sparse_cuda concatenates indices and values (no
            # merge: the result is not coalesced), other's values scaled
            # by alpha first
            for x in (tv, ov):
                if x.dtype != common:
                    self.temp(x.shape, common, x.device, keep, op)
            if alpha != 1:
                self.temp(ov.shape, common, ov.device, keep, op)
            i = self._empty((ti.shape[0], n1 + n2), ti)
            v = self._empty((n1 + n2,) + tuple(tv.shape[1:]), tv, dtype)
            coalesced = n1 + n2 > t.numel()  # "prevent unbounded growth of nnz"
            if coalesced:
                i, v = self._coalesced(t, i, v, keep, op)
        if inplace:
            _set_parts(t, i, v)
            t._coalesced_(coalesced)
            return t
        return self.make(i, v, t.shape, coalesced)

    def scale(self, func, args, kwargs, keep):
        """mul/div of a sparse tensor by a number (or a 0-d tensor), neg:
        new values, and the indices copied (mul_out_sparse_zerodim)."""
        t = args[0]
        if not is_sparse(t) or (len(args) > 1 and (is_sparse(args[1]) or getattr(args[1], "dim", lambda: 0)() > 0)):
            return NotImplemented  # sparse by sparse or dense: the meta kernel says
        dtype = self.torch.result_type(t, args[1]) if len(args) > 1 else t.dtype
        if str(func).startswith("aten.div") and not (dtype.is_floating_point or dtype.is_complex):
            dtype = self.torch.get_default_dtype()
        i, v = self._copies(t, dtype)
        return self.make(i, v, t.shape, t.is_coalesced())

    def scale_(self, func, args, kwargs, keep):
        t = args[0]
        if not is_sparse(t) or (len(args) > 1 and (is_sparse(args[1]) or getattr(args[1], "dim", lambda: 0)() > 0)):
            return NotImplemented
        return t  # its values, in place

    def clone(self, func, args, kwargs, keep):
        t = args[0]
        dev = kwargs.get("device")
        if dev is not None and self.torch.device(dev).type != "meta":
            return NotImplemented  # to the host: answered as other copies to the host are
        if kwargs.get("layout") not in (None, self.torch.sparse_coo):
            return NotImplemented
        i, v = self._copies(t, kwargs.get("dtype"))
        return self.make(i, v, t.shape, t.is_coalesced())

    def copy_(self, func, args, kwargs, keep):
        dst, src = args[0], args[1]
        if not (is_sparse(dst) and is_sparse(src)):
            return NotImplemented
        i, v = self._copies(src, dst.dtype)
        _set_parts(dst, i, v)
        dst._coalesced_(src.is_coalesced())
        return dst

    def zero_(self, func, args, kwargs, keep):
        """Fresh empty indices and values (sparse_resize_and_clear_): the meta
        kernel does it."""
        t = args[0]
        if not is_sparse(t):
            return NotImplemented
        out = func(*args, **kwargs)
        _forget(t)
        return out

    def coalesce(self, func, args, kwargs, keep):
        t = args[0]
        i, v = parts(t)
        if int(v.shape[0]) < 2:
            a, b = self._copies(t)
            return self.make(a, b, t.shape, True)
        a, b = self._coalesced(t, i, v, keep, str(func))
        return self.make(a, b, t.shape, True)

    def _coalesced(self, t, i, v, keep, op):
        """_coalesce_sparse_cuda's indices and values for parts i, v of t,
        its scratch in keep. The distinct indices are data: those of
        indices with known values are counted, else every index is taken
        as distinct (as many as there are rows at most), the most they can
        be."""
        torch = self.torch
        n, sd = int(v.shape[0]), int(i.shape[0])
        rows = 1
        for s in t.shape[:sd]:
            rows *= int(s)
        m = self._distinct(t, i, n, rows, sd, op)
        flat = self._empty((n,), i)  # the flattened indices, sorted in place
        for _ in range(2):  # origIndices, uniqueOffsets
            self.temp((n,), torch.long, i.device, keep, op)
        self.temp((n * SORT_SCRATCH_PER_ELEMENT,), torch.uint8, i.device, keep, op)
        values = self._empty((m,) + tuple(v.shape[1:]), v)
        if sd == 1:
            # indices1D resized down to (1, m): its storage stays n long
            out = flat.narrow(0, 0, m).unsqueeze(0)
            _same_rows(i, out, m)
            return out, values
        keep.append(flat)
        self.T.on_output(flat, op)
        return self._empty((sd, m), i), values

    def _distinct(self, t, i, n, rows, sd, op):
        if sd == 1:
            k = _storage_of(i)
            e = _rows.get(k[0])
            if e is not None and e[0] == k[1]:
                return min(e[1], n)
        m = min(n, rows)
        self.T.warn(_trace_masks.KIND, op, "all %d indices of a sparse tensor taken as distinct (%d rows): "
                    "the most they can be" % (n, rows), _trace_masks.MOST)
        return m

    def sparse_mask(self, func, args, kwargs, keep):
        """dense.sparse_mask(mask): dense's values at mask's indices, which
        the result shares."""
        t, mask = args[0], args[1]
        if is_sparse(t) or not is_sparse(mask):
            return NotImplemented
        mi, mv = parts(mask)
        values = self._empty((mv.shape[0],) + tuple(t.shape[mask.sparse_dim():]), t)
        return self.make(mi, values, t.shape, mask.is_coalesced())

    def to_dense(self, func, args, kwargs, keep):
        t = args[0]
        if not is_sparse(t):
            return NotImplemented
        return self._empty(t.shape, parts(t)[1], kwargs.get("dtype"))

    def view_part(self, func, args, kwargs, keep):
        t = args[0]
        e = _now.get(id(t))
        if e is None or e[0]() is not t:
            return NotImplemented  # the tensor's own: the meta kernel's view
        x = e[1] if "indices" in str(func) else e[2]
        return self.torch.ops.aten.alias.default(x)

    def nnz(self, func, args, kwargs, keep):
        t = args[0]
        e = _now.get(id(t))
        if e is None or e[0]() is not t:
            return NotImplemented
        return int(e[2].shape[0])

    def alias(self, func, args, kwargs, keep):
        t = args[0]
        e = _now.get(id(t))
        if e is None or e[0]() is not t:
            return NotImplemented
        return self.make(e[1], e[2], t.shape, t.is_coalesced())

    def foreach_norm(self, func, args, kwargs, keep):
        """_foreach_norm of a list with sparse gradients in it (clip_grad_norm_
        on a foreach device): CUDA's slow path, one norm each."""
        out = []
        for t in args[0]:
            if is_sparse(t):
                out.append(self.norm(func, (t,), {}, keep))
            else:
                out.append(self.torch.empty((), dtype=kwargs.get("dtype") or t.dtype, device=t.device))
        return out

    def norm(self, func, args, kwargs, keep):
        """norm_sparse: the norm of the coalesced values (a coalesce's
        scratch and copy, freed at once), over all of the tensor
        (clip_grad_norm_ of sparse gradients: torch.norm in 1.13,
        linalg.vector_norm in 2.x)."""
        t = args[0]
        dim = args[2] if len(args) > 2 else kwargs.get("dim")
        keepdim = args[3] if len(args) > 3 else kwargs.get("keepdim", False)
        if not is_sparse(t) or keepdim or (dim and sorted(d % t.dim() for d in dim) != list(range(t.dim()))):
            return NotImplemented  # over some dimensions: the meta kernel says
        i, v = parts(t)
        if not t.is_coalesced() and int(v.shape[0]) >= 2:
            a, b = self._coalesced(t, i, v, keep, str(func))
            for x in (a, b):
                self.T.on_output(x, str(func))
                keep.append(x)
        dtype = kwargs.get("dtype") or v.dtype
        return self.torch.empty((), dtype=dtype, device=v.device)


def constructors(torch):
    """The Python functions that make a sparse COO tensor of indices and
    values which meta refuses (construct()): function -> how its
    arguments are laid out."""
    out = {torch.Tensor.new: "new"}
    f = getattr(torch, "sparse_coo_tensor", None)
    if f is not None:
        out[f] = "coo"
    return out


def construct(sparse, kind, args, kwargs):
    """torch.sparse_coo_tensor(indices, values, size) and a sparse tensor's
    legacy .new(indices, values, size) (torch.optim's Adagrad and
    SparseAdam make their updates so) of meta indices and values: made
    without reading the indices (torch 1.13 checks their range on the
    host; .new refuses SparseMeta). A size the indices' data would give
    is not known: NotImplemented, and the call goes on as it would."""
    if kind == "new":
        if len(args) < 3 or not is_sparse(args[0]):
            return NotImplemented
        indices, values = args[1], args[2]
        size = args[3] if len(args) > 3 else kwargs.get("size", args[0].shape)
    else:
        if len(args) < 2:
            return NotImplemented
        indices, values = args[0], args[1]
        size = args[2] if len(args) > 2 else kwargs.get("size")
    if size is None or not all(getattr(x, "is_meta", False) for x in (indices, values)):
        return NotImplemented
    if getattr(indices, "is_sparse", False) or indices.dim() != 2:
        return NotImplemented
    dtype = kwargs.get("dtype")
    if dtype is not None and dtype != values.dtype:
        values = values.to(dtype)
    out = sparse.make(indices, values, tuple(int(x) for x in size), bool(kwargs.get("is_coalesced", False)))
    if kwargs.get("requires_grad"):
        out.requires_grad_(True)
    return out
