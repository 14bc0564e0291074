"""torchmem estimate --trace: run the program with its GPU redirected and
record every tensor storage the GPU would hold.

Armed by torchmem's sitecustomize when TORCHMEM_TRACE names the trace file
(made here with O_EXCL, so a spawned child of the job does not trace too).
When torch is imported, start() installs:

  - a TorchFunctionMode that sends "cuda" to TORCHMEM_TRACE_DEVICE: "meta"
    (tensors with shapes and dtypes, no data) or "cpu" (real tensors,
    torchmem's tests compare the two); .cuda()/.to("cuda") copy as on a GPU;
    torch.cuda.* answers as the GPU of --gpu;
  - a TorchDispatchMode that sees every op's outputs: a storage not seen
    before is an allocation (storage nbytes, dtype, shape, op, module,
    phase, the program's own stack); a weak reference on each tensor object
    frees the storage when the last one goes (a tensor object lives as
    long as its C++ tensor, autograd's saved tensors included);
  - hooks for the phase: module forward hooks, autograd.backward, the
    optimizer's step (parameters, gradients, optimizer states classified
    there). After TORCHMEM_TRACE_STEPS optimizer steps the trace ends and
    the process exits 0;
  - with TORCHMEM_TRACE_AUTOCAST (bfloat16, float16), the AMP recipe's
    autocast region around the forward and the loss, for the amp lever's
    retrace (_trace_amp.py; the header says autocast=DTYPE).

The trace is text, one event a line, tab-separated (internal/estimate
trace.go parses it):
  torchmem-trace 1 key=value...   header
  S sid frame...                  a stack (frames "file:line:function")
  A id bytes cat phase step sid module op dtype shape
  F id                            the storage was freed
  C id cat                        what the storage turned out to be (param,
                                  buffer, grad, optstate, autocast, loaded:
                                  made by torch.load)
  R                               torch.cuda.empty_cache(): the allocator
                                  gives its wholly free segments back
  O id module                     what a block (a numbered module,
                                  model.layers.3) returned from its forward
  L id n                          a block's forward used the storage last
                                  after n allocations and frees
  I id module                     the storage was given to a block's
                                  forward (O, L and I: _trace_blocks.py)
  M bytes what                    GPU memory outside the caching allocator
                                  (what: paged_optimizer_states, the CUDA
                                  managed memory of bitsandbytes' paged
                                  optimizers)
  U id                            autograd saved the storage for a backward
                                  no backward ran: its graph went unused
                                  (_trace_saved.py)
  Q bytes params                  at the end of the steps: optimizer states
                                  a longer run makes, for trainable
                                  parameters (that many elements) that got
                                  no gradient in the traced steps
  G id elements                   the storage is part of a sparse gradient
                                  for a parameter of that many elements
                                  (its values: the parameter's; its indices:
                                  0), which its bytes do not say
  T stream                        the allocations from here on are made on
                                  this CUDA stream (0: the default one;
                                  _trace_api.py numbers torch.cuda.Stream's)
  K key value                     the program set the allocator: memory_fraction
                                  (torch.cuda.set_per_process_memory_fraction)
  W kind op sid message [rule]    a note: a value read from a tensor without
                                  data, a size assumed (rule: what sized it),
                                  ...; each site of a kind once
  N kind count                    at the end: the notes of a kind, when more
                                  than its W lines (sites said once, at most
                                  MAX_WARNINGS a kind)
  D key value                     distributed: world (size), backend (the
                                  one asked for), rank (asked for, when not
                                  0), launcher, wrapper (DDP, ...)
  E reason op sid message         the end: steps, exit, error, truncated
Nothing here may raise into the program.
"""

import contextlib
import functools
import os
import sys
import threading
import weakref

from torchmem_hook import _trace_api, _trace_masks, _trace_sdpa, _trace_torch2, _trace_values
from torchmem_hook import _common, _trace_amp, _trace_blocks, _trace_bnb, _trace_compat, _trace_deepspeed, _trace_dist, _trace_safetensors
from torchmem_hook import _trace_legacy, _trace_saved, _trace_sparse

_clean = _common.one_line
_debug = _common.debug
_is_cuda = _trace_api.is_cuda
_is_index = _trace_api.is_index

ENV_OUT = "TORCHMEM_TRACE"
ENV_STEPS = "TORCHMEM_TRACE_STEPS"
ENV_DEVICE = "TORCHMEM_TRACE_DEVICE"
ENV_GPU_NAME = "TORCHMEM_TRACE_GPU_NAME"
ENV_GPU_BYTES = "TORCHMEM_TRACE_GPU_BYTES"
ENV_MAX_BYTES = "TORCHMEM_TRACE_MAX_BYTES"
ENV_JOB = "TORCHMEM_TRACE_JOB"  # the traced program's command line, for its children to compare

# Bounds: frames kept per stack, frames walked looking for them, warnings
# of each kind.
MAX_FRAMES = 6
MAX_WALK = 64
MAX_WARNINGS = 20

_state = None


def armed():
    return bool(os.environ.get(ENV_OUT))


class _Writer(object):
    def __init__(self, path, limit):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self.f = os.fdopen(fd, "w")
        self.pid = os.getpid()
        self.limit = limit
        self.n = 0
        self.closed = False

    def line(self, fields):
        if self.closed or os.getpid() != self.pid:
            return False
        s = "\t".join(fields) + "\n"
        self.n += len(s)
        if self.limit and self.n > self.limit:
            return False
        self.f.write(s)
        return True

    def close(self):
        if not self.closed and os.getpid() == self.pid:
            self.closed = True
            try:
                self.f.close()
            except Exception:
                pass


# Where a storage the tracer knows is (a live entry's fourth field): on the
# device (an allocation), a host placeholder (meta mode: a meta tensor
# standing for a CPU one), or the program's own meta tensor (meta mode: made
# under torch.device("meta") or of such tensors; on the GPU it is on meta
# too, nothing allocated, until to_empty() makes it on the device).
DEVICE, HOST, OWN = "device", "host", "own"

class _Counts(threading.local):
    """What a call in progress says of the tensors it makes, each thread's
    own (a DataLoader's pin-memory thread is not inside the main thread's
    .cuda()): redirect > 0 inside a call that made tensors on the GPU,
    hosting > 0 while weights are made host placeholders, quiet > 0 while
    a copy is made that is recorded as a whole afterwards; side: a thread
    the program started (_install_threads), whose allocations are not the
    model's."""
    redirect = hosting = quiet = 0
    side = False


def _count(name):
    return property(lambda self: getattr(self.counts, name),
                    lambda self, v: setattr(self.counts, name, v))


class _Tracer(object):
    redirect, hosting, quiet = _count("redirect"), _count("hosting"), _count("quiet")

    def __init__(self, torch, writer, device, steps):
        self.torch = torch
        self.w = writer
        self.device = device  # "meta" or "cpu"
        # cpu mode: what a device tensor (a CPU tensor standing for a CUDA
        # one) answers for .device: one torch.device("cpu") object, told by
        # identity from a host tensor's, so device=x.device and
        # .to(x.device) make a device tensor for a device x only. It is the
        # CPU to every op and equal to any other "cpu". In meta mode a
        # device tensor answers one torch.device("meta") object too, told
        # from the program's own meta device: `with torch.device(
        # x.device)` of a device tensor x (torchtitan's init_weights) is the
        # GPU, `with torch.device("meta")` the program's own meta tensors.
        self.device_marker = torch.device(device) if device in ("cpu", "meta") else None
        self.steps = steps
        self.done = 0  # optimizer steps completed
        self.iteration = _common.Steps()  # which steps count
        self.phase = "setup"
        self.live = {}  # storage key -> [alloc id, bytes, holders, where (DEVICE, HOST, OWN), category]
        self.held = {}  # id(tensor) -> (weakref, storage key)
        self.next_id = 1
        self.stacks = {}
        self.modules = []  # names of the modules whose forward runs
        self.events = 0  # A and F events written
        self.stream = 0  # the stream of the last T event (0: none written, the default)
        # the trace's state is one for the threads the program starts
        # (_install_threads): one of them at a time records an op, a free
        # or a line
        self.lock = threading.RLock()
        self.saved = {}  # id autograd saved for a backward, alive -> engine runs begun then (_trace_saved.py)
        self.engine = 0  # > 0 while autograd's engine runs (backward, autograd.grad)
        self.engine_runs = 0  # the engine's runs begun
        self.blocks = _trace_blocks.Blocks(self, _flat, _skey, DEVICE)
        self.amp = _trace_amp.Forced(torch, self)  # the amp lever's retrace
        self.names = weakref.WeakKeyDictionary()
        self.seen = weakref.WeakSet()
        self.rooted = weakref.WeakSet()  # modules whose parts were named from them (_name_modules)
        self.counts = _Counts()  # redirect, hosting, quiet: each thread's
        self.not_meta = 0  # > 0 while FSDP asks whether a device tensor is on meta (not made yet)
        # meta mode, FSDP's CPU offload: > 0 while FSDP moves shards or their
        # gradients to the host, each copy a host placeholder whatever its
        # size (a 70B model's shards would otherwise be zeros in this
        # process's RAM)
        self.offload = 0
        # FSDP1's offloaded flat parameters and gradients (storage keys):
        # they answer .device as the host, which FSDP1 checks (FSDP2's are
        # DTensors, whose device torch reads where the tracer cannot answer)
        self.on_host = set()
        self.says_host = 0  # > 0 while FSDP1 offloads: what it offloads is put in on_host
        # meta mode, DeepSpeed's CPU offload: > 0 while its engine runs, when
        # what it makes with device="cpu" is a host placeholder
        self.host_made = 0
        self.host_params = 0  # the parameters of rank 0's shards CPU offload keeps on the host
        # the device FSDP1's offloaded tensors answer: the CPU, told apart by
        # identity (a factory given it makes a host placeholder)
        self.host_marker = torch.device("cpu")
        self.own_meta = 0  # > 0 while the program makes tensors on meta itself (meta mode, OWN)
        self.wrappers = set()  # the distributed wrappers said (D wrapper)
        self.final_ids = set()  # allocations classified final (classify)
        self.sparse_ids = set()  # parts of sparse gradients said (G events)
        self.sparse_grads = {}  # id -> weak ref: the sparse gradients said
        self.fake_ptrs = {}  # meta mode: storage key -> the data address it answers
        # meta mode, torch < 2.2: id of a real host Parameter -> weak
        # references to it and to the new one Module._apply moved it to
        # (_same_parameter); by id, as a tensor's == is elementwise
        self.moved = {}
        self.in_step = 0
        self.forced = None  # the category of what is made now (counted_as)
        self.warnings = {}  # kind -> notes of it (W events written: warned's)
        self.warned = {}  # kind -> the (op, stack id) sites of its W events
        self.failure = None
        self.ended = False
        self.allocated = 0
        self.peak = 0
        # What torch.cuda.memory_reserved() answers while the program runs:
        # the caching allocator keeps the blocks it was given until
        # empty_cache(), so what it holds is at least the most allocated
        # since then. (The allocator model's rounding and fragmentation come
        # after the trace.) yolov5's AutoBatch fits its batch size to it.
        self.cached = 0
        self.skip = (os.path.dirname(os.path.abspath(torch.__file__)),
                     os.path.dirname(os.path.abspath(__file__)))

    # -- the program's stack ------------------------------------------------

    def stack_id(self):
        frames = []
        f = sys._getframe(2)
        walked = 0
        while f is not None and walked < MAX_WALK and len(frames) < MAX_FRAMES:
            fn = f.f_code.co_filename
            if not fn.startswith(self.skip) and not fn.startswith("<"):
                frames.append("%s:%d:%s" % (fn, f.f_lineno, f.f_code.co_name))
            f = f.f_back
            walked += 1
        key = tuple(frames)
        with self.lock:
            sid = self.stacks.get(key)
            if sid is None:
                sid = len(self.stacks) + 1
                self.stacks[key] = sid
                self.w.line(["S", str(sid)] + [_clean(x) for x in frames])
        return sid

    # -- storages -----------------------------------------------------------

    def is_device(self, t):
        if self.device == "meta":
            return t.is_meta
        return self.redirect > 0 or _skey(t) in self.live

    def category(self):
        if self.forced:
            return self.forced
        if self.counts.side:
            # a thread the program started (a prefetcher): what it moves
            # to the GPU is input data, whatever the model's thread is in
            return "data" if self.redirect else "other"
        if self.in_step and self.phase not in ("forward", "backward"):
            # (the forward and backward of a closure the step calls, as
            # Lightning's automatic optimization and LBFGS run them, are
            # the model's, not the optimizer's)
            return "opttemp"
        if self.phase == "backward":
            return "bwd"
        if self.modules:
            return "fwd"
        if self.redirect:
            # moved to or made on the GPU outside any module: input data,
            # also in the forward phase a forward without a backward left
            # (CycleGAN's next batch, moved after its sampling forward)
            return "data"
        if self.phase == "forward":
            return "fwd"
        return "other"

    def on_output(self, t, op, cat=None, host=False, own=False):
        if _trace_sparse.is_sparse(t):
            # its indices and values, each held by it (_trace_sparse.py)
            for part, x in enumerate(_trace_sparse.parts(t)):
                self._on_output(x, op, cat, host, own, (t, part))
            return
        self._on_output(t, op, cat, host, own, None)

    def _on_output(self, t, op, cat, host, own, holder):
        key = _skey(t)
        e = self.live.get(key)
        if e is None:
            nbytes = _storage(t).nbytes()
            if nbytes == 0:
                if holder is not None:  # a sparse tensor's part emptied (zero_)
                    self.unhold(_hold_id(holder))
                return  # the CUDA allocator hands out nothing for it
            if host or own:
                # A meta tensor standing for a host (CPU) tensor: a weight
                # or a loaded checkpoint tensor; or one the program made on
                # meta itself. No allocation on the GPU.
                self.live[key] = [0, nbytes, 0, OWN if own else HOST, None]
                self.hold(t, key, holder)
                return
            e = [-1, 0, 0, DEVICE, None]
            self.live[key] = e
            self.allocate(e, nbytes, cat, op, str(t.dtype).replace("torch.", ""),
                          ",".join(str(int(x)) for x in t.shape))
            self.blocks.made_now(e[0], key)
        self.hold(t, key, holder)

    def allocate(self, e, nbytes, cat, op, dtype, shape):
        """Record live entry e's storage as an allocation of nbytes.
        An entry is [allocation id (-1: none now), bytes, tensors holding
        it, host placeholder, the category it was last classified as]."""
        aid = self.next_id
        self.next_id += 1
        e[0], e[1] = aid, nbytes
        self.allocated += nbytes
        self.peak = max(self.peak, self.allocated)
        self.cached = max(self.cached, self.allocated)
        self.events += 1
        stream = _trace_api.current_stream_id()
        if stream != self.stream:
            self.stream = stream
            self.emit(["T", str(stream)])
        self.emit(["A", str(aid), str(nbytes), cat or self.category(), self.phase,
                   str(self.done + 1), str(self.stack_id()),
                   _clean(self.modules[-1] if self.modules and not self.counts.side else ""),
                   _clean(op), dtype, shape])

    def release(self, e):
        if e[0] >= 0 and e[3] is DEVICE:
            self.allocated -= e[1]
            self.events += 1
            if self.saved and self.saved.pop(e[0], None) is not None and not self.engine:
                self.emit(["U", str(e[0])])  # its graph goes unused (_trace_saved.py)
            self.emit(["F", str(e[0])])
        e[0], e[1] = -1, 0

    def fake_ptr(self, key):
        """meta mode: a storage's data address, which meta storages do not
        have (0 for all): one of its own per storage, 64 GiB apart, so
        that code telling tensors apart by data_ptr() (accelerate maps the
        optimizer's parameters to their FSDP2 shards so) sees them apart."""
        base = self.fake_ptrs.get(key)
        if base is None:
            base = self.fake_ptrs[key] = (len(self.fake_ptrs) + 1) << 36
        return base

    def on_resize(self, key, nbytes, dtype):
        """A device storage resized in place (FSDP frees and refills its
        unsharded parameters so): the old allocation is freed, a new one
        of nbytes made (none for 0), in the category it was classified as."""
        e = self.live.get(key)
        if e is None or e[3] is not DEVICE or nbytes == e[1]:
            return
        self.release(e)
        if nbytes > 0:
            self.allocate(e, nbytes, None, "resize_", dtype, str(nbytes))
            if e[4]:
                self.emit(["C", str(e[0]), e[4]])

    @contextlib.contextmanager
    def quietly(self):
        """What is made meanwhile is not recorded (a copy recorded as a
        whole afterwards, an alias the caller accounts for)."""
        self.quiet += 1
        try:
            yield
        finally:
            self.quiet -= 1

    @contextlib.contextmanager
    def making(self, cuda):
        """meta mode: what is made meanwhile is a device allocation (cuda:
        a load that names the GPU) or else a host placeholder."""
        if cuda:
            self.redirect += 1
        else:
            self.hosting += 1
        try:
            yield
        finally:
            if cuda:
                self.redirect -= 1
            else:
                self.hosting -= 1

    def hold(self, t, key, holder=None):
        """t holds storage key, or holder (a sparse tensor, which part) does."""
        if holder is not None:
            t, tid = holder[0], _hold_id(holder)
        else:
            tid = id(t)
        h = self.held.get(tid)
        if h is not None:
            if h[1] == key:
                return
            self.unhold(tid)
        e = self.live.get(key)
        if e is None:
            return
        e[2] += 1
        self.held[tid] = (weakref.ref(t, lambda _r, tid=tid: self.unhold(tid)), key)

    def unhold(self, tid):
        # (a weakref's callback: in the thread that dropped the tensor)
        with self.lock:
            self._unhold(tid)

    def _unhold(self, tid):
        h = self.held.pop(tid, None)
        if h is None:
            return
        e = self.live.get(h[1])
        if e is None:
            return
        e[2] -= 1
        if e[2] <= 0:
            del self.live[h[1]]
            self.on_host.discard(h[1])
            self.release(e)  # (nothing for a host placeholder)

    def adopt(self, t):
        """t now uses another storage (param.data = x)."""
        if t is None:
            return
        try:
            key = _skey(t)
        except Exception:
            return
        if key not in self.live:
            # a storage the tracer does not count (an empty one: FSDP's
            # use_orig_params gives a weight outside this rank's shard
            # torch.empty(0)): the old one is no longer held by t
            self.unhold(id(t))
            return
        self.hold(t, key)  # a device storage or a host placeholder
        if isinstance(t, self.torch.nn.Parameter):
            # Module._apply moving or casting a weight (.cuda(),
            # .half()): the copy is a weight from the start, not the
            # input data an unowned .cuda() would be taken for.
            self.classify(t, "param")

    def is_device_storage(self, t):
        return self.where(t) is DEVICE

    def is_host(self, t):
        return self.where(t) is HOST

    def offloaded(self, t, says_host=False):
        """meta mode: host placeholder t is what FSDP's CPU offload keeps on
        the host; while FSDP1 offloads (or made where an offloaded tensor
        is), it answers .device as the host (host_marker)."""
        if self.says_host or says_host:
            self.on_host.add(_skey(t))

    def on_offload_host(self, kwargs):
        """meta mode: a factory's device= is where FSDP1's offloaded tensors
        are (the marker they answer, or the CPU while FSDP1 offloads)."""
        d = kwargs.get("device")
        return d is not None and (d is self.host_marker or self.says_host > 0 and _trace_api.is_cpu(d))

    def is_offloaded(self, t):
        try:
            return bool(self.on_host) and _skey(t) in self.on_host
        except Exception:
            return False

    def is_own(self, t):
        return self.where(t) is OWN

    def where(self, t):
        """DEVICE, HOST, OWN, or None for a storage the tracer does not know."""
        try:
            e = self.live.get(_skey(t))
        except Exception:
            return None
        return None if e is None else e[3]

    def inputs_only(self, where, args, kwargs):
        """meta mode: the op's tensor inputs the tracer knows are all
        where (HOST: a host placeholder and no device tensor, so the op runs
        on the host; OWN: the program's own meta tensors), and there is one."""
        found = False
        for a in _flat((args, kwargs or {}), []):
            if isinstance(a, self.torch.Tensor):
                w = self.where(a)
                if w is not None:
                    if w is not where:
                        return False
                    found = True
        return found

    def classify(self, t, cat, final=False):
        """Count t's storage as cat. final: a library that named the buffer
        knows best (DeepSpeed's fp32 master weights are its inner
        optimizer's parameters): later classifications do not change it."""
        if t is None:
            return
        inner = _inner_tensors(t)
        if inner is not None:  # a wrapper subclass: what it wraps is what it is
            for x in inner:
                self.classify(x, cat, final)
            return
        if _trace_sparse.is_sparse(t):  # a sparse gradient: its indices and values
            for part, x in enumerate(_trace_sparse.parts(t)):
                aid = self._classify(x, cat, final, (t, part))
                if cat == "grad" and aid is not None and aid not in self.sparse_ids:
                    # the parameter's elements once a gradient: parts an
                    # accumulation (add_) gave it later stand for none more
                    r = self.sparse_grads.get(id(t))
                    first = part == 1 and (r is None or r() is not t)
                    if first:  # (by id: a WeakSet compares tensors with ==)
                        self.sparse_grads[id(t)] = weakref.ref(t)
                    self.sparse_ids.add(aid)
                    self.emit(["G", str(aid), str(t.numel() if first else 0)])
            return
        self._classify(t, cat, final, None)

    def _classify(self, t, cat, final, holder):
        try:
            e = self.live.get(_skey(t))
        except Exception:
            return
        if e is not None and e[3] is DEVICE:
            if cat == "param":
                if _trace_bnb.packs_4bit(t):
                    cat = "param4"  # two values a byte
                for q in _trace_bnb.state_tensors(t):
                    self.classify(q, "buffer")
            if e[0] in self.final_ids and not final:
                return
            if final and e[0] >= 0:
                self.final_ids.add(e[0])
            self.hold(t, _skey(t), holder)
            e[4] = cat
            if e[0] >= 0:
                self.emit(["C", str(e[0]), cat])
                return e[0]
        return None

    def classify_module(self, m, recurse):
        for p in m.parameters(recurse=recurse):
            self.classify(p, "param")
            self.classify(p.grad, "grad")
        for b in m.buffers(recurse=recurse):
            self.classify(b, "buffer")

    # -- events -------------------------------------------------------------

    def emit(self, fields):
        with self.lock:
            if self.ended:
                return
            if not self.w.line(fields):
                if not self.w.closed and os.getpid() == self.w.pid:
                    self.w.limit = 0
                    self.end("truncated", "", "trace file size limit reached")

    def outside(self, what, nbytes):
        """nbytes of GPU memory the caching allocator does not hold."""
        if nbytes > 0:
            self.emit(["M", str(int(nbytes)), what])

    def set_phase(self, phase):
        if phase != self.phase:
            self.phase = phase
            self.emit(["P", phase, str(self.done + 1)])

    def warn(self, kind, op, msg, rule=None):
        # each site of a kind once (a note every step repeats is one), at
        # most MAX_WARNINGS sites a kind: many values read from tensors
        # without data do not crowd out a note said once, nor the first
        # sites of a kind its later ones; every call is counted (the N
        # lines at the end). rule: what sized a datashape note's op
        # (_trace_masks' names).
        with self.lock:
            self.warnings[kind] = self.warnings.get(kind, 0) + 1
            sites = self.warned.setdefault(kind, set())
            if len(sites) >= MAX_WARNINGS:
                return
            sid = self.stack_id()
            if (op, sid) in sites:
                return
            sites.add((op, sid))
            self.emit(["W", kind, _clean(op), str(sid), _clean(msg)] + ([rule] if rule else []))

    @contextlib.contextmanager
    def counted_as(self, cat):
        """What is made inside counts as cat (DDP's buckets: grad)."""
        before, self.forced = self.forced, cat
        try:
            yield
        finally:
            self.forced = before

    def distributed(self, world, backend, rank):
        self.emit(["D", "world", str(int(world))])
        self.emit(["D", "backend", _clean(backend)])
        if rank:
            self.emit(["D", "rank", _clean(str(rank))])  # traced as rank 0 all the same

    def offloaded_params(self, n):
        """FSDP's CPU offload keeps n more of rank 0's parameters on the host."""
        self.host_params += int(n)
        self.emit(["D", "host_params", str(self.host_params)])

    def wrapped(self, name):
        # each wrapper once (fully_shard is called per block)
        if name not in self.wrappers:
            self.wrappers.add(name)
            self.emit(["D", "wrapper", _clean(name)])

    def end(self, reason, op, msg, exit_now=True):
        if self.ended:
            return
        _trace_saved.at_end(self)
        for kind, n in sorted(self.warnings.items()):
            if n > len(self.warned.get(kind, ())):
                self.emit(["N", kind, str(n)])  # more than its W lines say
        self.emit(["E", reason, _clean(op), str(self.stack_id()), _clean(msg)])
        self.ended = True
        self.w.close()
        if exit_now:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(0)


def _inner_tensors(t):
    """The tensors a wrapper subclass holds (DTensor's local shard), by the
    protocol torch.compile uses (__tensor_flatten__), or None."""
    flatten = getattr(t, "__tensor_flatten__", None)
    if flatten is None:
        return None
    try:
        names = flatten()[0]
        return [x for x in (getattr(t, n, None) for n in names) if x is not None]
    except Exception:
        return None


def _outputs(out, kinds):
    """An op's output tensors, a wrapper subclass's (kinds: _SubclassKinds)
    as the tensors it wraps (__tensor_flatten__): it holds no memory of its
    own, its storage is the size of the tensor without data (the
    AsyncCollectiveTensor that torch 2.8+'s _wrap_tensor_autograd returns
    around its input was counted as a copy of it)."""
    ts = []
    for t in _flat(out, []):
        inner = _inner_tensors(t) if kinds.of((type(t),)) == "wrapper" else None
        ts.extend(inner if inner is not None else (t,))
    return ts


def _storage(t):
    # torch >= 2.0: untyped_storage(); 1.13: _storage() (both untyped).
    f = getattr(t, "untyped_storage", None)
    return f() if f is not None else t._storage()


def _skey(t):
    if _trace_sparse.is_sparse(t):  # a sparse tensor stands for its values
        t = _trace_sparse.parts(t)[1]
    return _storage(t)._cdata


def _hold_id(holder):
    """The id a part of a sparse tensor is held under (Tracer.hold)."""
    return (id(holder[0]), holder[1])


_flat = _common.flat


def _cuda_dropout(torch, dropout, args, kwargs):
    """F.dropout as it runs on a GPU. at::dropout takes the fused
    native_dropout only for CUDA tensors (is_fused_kernel_acceptable); on
    meta or CPU it makes a float noise tensor of the input's size and saves
    it, where CUDA saves a one-byte mask. The trace must be the GPU's."""
    names = ("input", "p", "training", "inplace")
    a = dict(zip(names, args))
    a.update(kwargs)
    x, p = a.get("input"), a.get("p", 0.5)
    if not a.get("training", True) or a.get("inplace", False) or not (0 < p < 1) or x.numel() == 0:
        return dropout(*args, **kwargs)
    return torch.native_dropout(x, p, True)[0]


def _answer(h, func, args, kwargs):
    try:
        return h(func, args, kwargs)
    except Exception:
        _debug()
        return _trace_api.PASS


def _sdpa_workspace(torch, T, sdpa, func, args):
    """Record the scratch a fused attention backward (torch >= 2.0) or CTC's
    backward allocates (meta mode)."""
    if T.device != "meta":
        return []
    try:
        op = str(func)
        ws = _trace_sdpa.workspace(torch, op, args) if sdpa is not None else []
        ws = ws or _trace_api.ctc_workspace(torch, op, args)
        for t in ws:
            T.on_output(t, str(func))
        return ws
    except Exception:
        _debug()
        return []


def _first_sentence(err):
    msg = str(err).split("\n")[0]
    return msg.split(". ")[0][:300]


def _conv_backward(torch, grad, inp, weight, bias_sizes, *a, **k):
    # What torch 1.13 has no meta kernel for; its outputs are the shapes
    # of the input, the weight and the bias (torch >= 2.0 has this kernel).
    mask = k.get("output_mask", a[-1] if a else [True, True, True])
    return (torch.empty_like(inp) if mask[0] else None,
            torch.empty_like(weight) if mask[1] else None,
            torch.empty(bias_sizes, dtype=grad.dtype, device=grad.device) if mask[2] else None)


def _foreach_inplace(torch, *a, **k):
    return None


def _foreach_out(torch, tensors, *a, **k):
    # Out-of-place _foreach ops (Adam's foreach exp_avg_sq.sqrt()): one new
    # tensor per input, as the per-tensor op makes.
    return [torch.empty_like(t) for t in tensors]


# Ops torch 1.13 cannot run on the meta device, done here by shape.
_META_FALLBACKS = {"aten.convolution_backward.default": _conv_backward}


def _lift_host(torch, T, func, args, kwargs):
    """meta mode: an op mixing host placeholders (weights made meta at
    construction) with real host tensors runs on meta, the real ones lifted
    there with their values. A model run once on the CPU before it is moved
    does this: YOLOv5 measures its strides with a forward of zeros, timm and
    torchvision heads size a layer from a dummy input. A real tensor the op
    writes into is left (the op then fails, named, as it would have)."""
    flat = _flat((args, kwargs or {}), [])
    Tensor = torch.Tensor
    real = [a for a in flat if isinstance(a, Tensor) and not a.is_meta and a.device.type == "cpu" and a.dim() > 0]
    if not real or not any(isinstance(a, Tensor) and a.is_meta and T.is_host(a) for a in flat):
        return args, kwargs
    written = _written_args(func, args, kwargs)
    lifted = {}
    for a in real:
        if id(a) not in written and id(a) not in lifted:
            m = a.to("meta")
            _trace_values.keep(m, a)
            T.on_output(m, "", host=True)
            lifted[id(a)] = m

    def lift(x):
        if isinstance(x, (list, tuple)):
            return type(x)(lift(y) for y in x)
        return lifted.get(id(x), x) if isinstance(x, Tensor) else x
    return lift(args), {k: lift(v) for k, v in (kwargs or {}).items()}


def _written_args(func, args, kwargs):
    """ids of the tensors op func writes into (self of an in-place op, out=)."""
    ids = set()
    try:
        for i, a in enumerate(func._schema.arguments):
            if a.alias_info is not None and a.alias_info.is_write:
                v = args[i] if i < len(args) else (kwargs or {}).get(a.name)
                ids.update(id(t) for t in _flat(v, []))
    except Exception:
        ids.update(id(t) for t in _flat((args, kwargs or {}), []))  # unknown: lift nothing
    return ids


def _scalar(torch, T, t):
    """A meta tensor's one value as a Python number: the known one, else
    0 (False), said as a placeholder as .item() is."""
    s = _trace_values.shadow(t)
    if s is not None:
        return s.reshape(-1)[0].item()
    T.warn("placeholder", "_local_scalar_dense", "a value read from a tensor without data: 0 was used")
    if t.dtype == torch.bool:
        return False
    return 0.0 if t.is_floating_point() or t.is_complex() else 0


def _host_copy(args):
    """copy_(dst, src) from the device into a host tensor."""
    return len(args) >= 2 and not getattr(args[0], "is_meta", True) and getattr(args[1], "is_meta", False)


class _SubclassKinds(object):
    """What the tensor types of an op are, each type asked once (the
    dispatch mode sees every op): "plain" (Tensor, Parameter), "fake"
    (FakeTensor among them) or "wrapper" (a subclass with its own
    __torch_dispatch__, such as DTensor)."""

    def __init__(self, torch):
        Tensor = torch.Tensor
        self.own = (Tensor.__torch_dispatch__, getattr(torch._C, "_disabled_torch_dispatch_impl", None))
        self.types = {Tensor: "plain"}

    def of(self, types):
        kind = "plain"
        for t in types:
            k = self.types.get(t)
            if k is None:
                k = self._kind(t)
                self.types[t] = k
            if k == "fake":
                return k
            if k == "wrapper":
                kind = k
        return kind

    def _kind(self, t):
        if getattr(t, "__torch_dispatch__", self.own[0]) in self.own:
            return "plain"
        return "fake" if t.__name__ == "FakeTensor" else "wrapper"


def _made_from_data(torch, T, func, args, kwargs, out):
    """torch.tensor/as_tensor/asarray of Python numbers on the device:
    torch makes it below the dispatcher (internal_new_from_data; no op a
    dispatch mode sees, where a tensor's or an array's data goes through
    _to_copy), so it is recorded here, and on meta given its values."""
    if not isinstance(out, torch.Tensor) or _skey(out) in T.live:
        return
    T.on_output(out, "aten.lift_fresh.default")  # as cpu mode records it
    if T.device == "meta":
        _trace_values.from_data(func, args, kwargs, out)


def _meta_fallback(name):
    fb = _META_FALLBACKS.get(name) or _trace_api.META_FALLBACKS.get(name)
    if fb is None and name.startswith("aten._foreach_"):
        base = name.split(".")[1]
        fb = _foreach_inplace if base.endswith("_") else _foreach_out
    return fb


def _made_on_host(torch, T, func, args, kwargs, says_host):
    """meta mode: a tensor made on the host as a host placeholder. With
    says_host, one made for FSDP1's CPU offload (its gradient's host
    buffer, zeros_like(shard, device="cpu"); an empty tensor made on an
    offloaded parameter's device), which answers .device as the host too."""
    T.hosting += 1
    try:
        out = func(*args, **dict(kwargs, device=torch.device("meta")))
    finally:
        T.hosting -= 1
    if says_host and isinstance(out, torch.Tensor):
        T.offloaded(out, True)
    return out


def _is_meta_index(d):
    return _is_device_object(d, "meta") and d.index is not None


def _is_own_meta(d, marker):
    """device= naming the program's own meta device: "meta" written out or
    a torch.device("meta") of its own, not the marker a device tensor's
    .device answers (device=x.device is the GPU)."""
    return d == "meta" or d is not marker and _is_device_object(d, "meta") and d.index is None


def _is_device_object(d, kind):
    t = getattr(d, "type", None)
    return not isinstance(d, str) and t == kind and not callable(t)


def _job(argv):
    """A program's command line as its copies run it (the script's
    absolute path: Lightning starts them with it)."""
    import json

    a = [str(x) for x in argv]
    if a:
        a[0] = os.path.abspath(a[0])
    return json.dumps(a)


def _multiprocessing_child():
    """This process is multiprocessing's (a DataLoader worker started by
    spawn or forkserver, Python 3.14's default, or the forkserver itself):
    it imports the program's main module with the program's sys.argv, as a
    copy would, but it is the program's own helper, not a copy of it."""
    mp = sys.modules.get("multiprocessing.process")
    return mp is not None and bool(getattr(mp.current_process(), "_inheriting", False))


def _not_a_copy():
    """The traced program started another copy of itself (Lightning's DDP
    starts one per further GPU, python script.py ARGS with LOCAL_RANK=1..):
    the trace is rank 0's, and a copy would run for real, untraced, on
    this host's GPUs and wait for ranks that never come. It ends here,
    saying so, before the program runs."""
    sys.stderr.write("torchmem: a copy of the traced program (LOCAL_RANK=%s) is not run: the trace is rank 0's\n"
                     % _clean(os.environ.get("LOCAL_RANK", "?"))[:16])
    sys.stderr.flush()
    os._exit(0)


def start(torch, refused=None):
    """Install the tracer (torch has just been imported). refused: why a
    launcher could not become its worker (_become_later)."""
    global _state
    if _state is not None:
        return
    device = os.environ.get(ENV_DEVICE) or "meta"
    launcher = _trace_api.launcher(sys.argv)
    why = refused or ""
    if refused is None and launcher in _trace_dist.LAUNCHERS and not os.path.exists(os.environ[ENV_OUT]):
        # torchrun: this process becomes its rank 0 worker (when it can;
        # --real: when that is the whole job, a world of one)
        real = device == "real"
        why = not real and _trace_dist.supported(torch)
        if not why and launcher == "deepspeed":
            # DeepSpeed's launcher reads its command line with its own
            # runner, which cannot be imported while deepspeed (importing
            # torch now) is half made: the launcher imports it next
            _common.after_import({_trace_dist.DEEPSPEED_RUNNER: lambda m: _become_later(torch, launcher, real)})
            return
        why = why or _trace_dist.become_worker(torch, launcher, sys.argv[1:], real)
    try:
        w = _Writer(os.environ[ENV_OUT], int(os.environ.get(ENV_MAX_BYTES) or 0))
    except OSError:
        # a child of the traced job: the trace is the parent's
        if device != "real" and os.environ.get(ENV_JOB) == _job(sys.argv) and not _multiprocessing_child():
            _not_a_copy()
        return
    if device != "real":
        os.environ[ENV_JOB] = _job(sys.argv)
    steps = int(os.environ.get(ENV_STEPS) or 2)
    if device == "real":  # --trace --real: nothing redirected (_trace_real.py)
        from torchmem_hook import _trace_real

        refused = None
        if launcher:
            refused = why or "%s runs the program in worker processes, which --real does not measure" % launcher
        _state = _trace_real.start(torch, w, os.environ[ENV_OUT], steps, refused)
        return
    T = _Tracer(torch, w, device, steps)
    _state = T
    header = ["torchmem-trace", "1", "device=" + device, "torch=" + _clean(torch.__version__),
              "python=%d.%d.%d" % sys.version_info[:3], "steps=%d" % steps]
    forced = T.amp.header()
    if forced:
        header.append(forced)
    w.line(header)
    if launcher:
        # The launcher imports torch first and would hold the trace while
        # its workers ran untraced (and waited on each other's process
        # group): say at once what to do instead.
        T.end("unsupported", launcher, why or "%s runs the program in worker processes, and %s" % (
            launcher, _trace_api.DISTRIBUTED_HELP))
    launched = os.environ.get(_trace_dist.ENV_LAUNCHED, "")
    if launched:
        T.emit(["D", "launcher", _clean(launched)])
    _install_cuda(torch, T)
    _trace_legacy.install(torch, T)  # torch.cuda.FloatTensor, the default device
    _trace_api.install(torch, T)
    _trace_deepspeed.install(torch, T)
    _trace_bnb.install(torch, T)
    _trace_compat.install(torch, T)
    _install_phases(torch, T)
    _install_data(torch, T)
    _install_compile(torch, T)
    _install_foreach(torch, T)
    if T.device == "meta":
        _install_jit_trace(torch, T)
    _install_loaded(torch, T)
    _trace_saved.install(torch, T, _skey)
    _install_modes(torch, T)
    _install_exit(T)


def _become_later(torch, launcher, real):
    """The launcher becomes its worker now (or is traced saying why not)."""
    start(torch, _trace_dist.become_worker(torch, launcher, sys.argv[1:], real) or "%s: not run" % launcher)


def _install_modes(torch, T):
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.overrides import TorchFunctionMode

    Tensor = torch.Tensor
    dev = T.device
    target = torch.device(dev)
    # __contains__ ("pad_token_id in input_ids", transformers'
    # warn_if_padding_and_no_attention_mask) reads .item() inside torch's
    # own __torch_function__ handling, where this mode is off: answered here.
    reads = {Tensor.item: 0.0, Tensor.tolist: [], Tensor.__bool__: False,
             Tensor.__float__: 0.0, Tensor.__int__: 0, Tensor.__index__: 0,
             Tensor.__contains__: False}
    passthrough = set([Tensor.pin_memory])
    # factories of data the program gives (their values are known)
    from_data = set(f for f in (torch.tensor, torch.as_tensor, getattr(torch, "asarray", None)) if f is not None)
    # what makes a buffer on the host by its size alone (DeepSpeed's offload)
    host_factories = set((torch.empty, torch.zeros, torch.ones, torch.full, torch.empty_strided))
    dropout = torch.nn.functional.dropout
    linear = torch.nn.functional.linear

    amp = _Autocast(torch, T) if dev == "meta" else None
    answers = _trace_api.answers(torch, T)  # is_cuda, .cpu().numpy(), ...
    is_cuda = answers[Tensor.is_cuda.__get__]
    _trace_masks.install(torch, T, answers, _trace_api.PASS)  # a router's one-hot masks, known indices
    sdpa = _trace_sdpa.install(torch, T)  # the GPU's fused attention kernels
    transparent = _trace_api.transparent(torch)  # run with the mode on inside
    # what the GPU refuses that meta takes (a source of another dtype)
    same_dtype = _trace_api.same_dtype_sources(torch) if dev == "meta" else None
    sparse = _trace_sparse.Sparse(torch, T) if dev == "meta" else None  # sparse COO tensors' rules
    sparse_makers = _trace_sparse.constructors(torch) if dev == "meta" else {}
    packet = getattr(torch._ops, "OpOverloadPacket", None)
    below_autograd = None
    if dev == "meta" and torch.__version__.split(".")[0] in ("0", "1"):  # 2.x falls through AutogradMeta
        below_autograd = getattr(torch._C, "_AutoDispatchBelowAutograd", None)

    class Redirect(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in answers:
                r = _answer(answers[func], func, args, kwargs)
                if r is not _trace_api.PASS:
                    return r
            if func in passthrough:
                return args[0]
            if func in sparse_makers:
                r = _trace_sparse.construct(sparse, sparse_makers[func], args, kwargs)
                if r is not NotImplemented:
                    return r
            if func is Tensor.backward:
                return _trace_compat.backward(torch, self, args, kwargs)
            if _trace_compat.is_autograd_entry(torch, func):
                # the wrapped (phase-counting) function, with the mode on
                return _trace_compat.autograd_call(torch, self, getattr(torch.autograd, func.__name__), args, kwargs)
            if func in transparent:
                return _trace_api.run_transparent(self, torch, func, args, kwargs)
            if amp is not None and func in amp.lists and torch.is_autocast_enabled():
                args, kwargs = amp.cast(func, args, kwargs)
            if func is linear:
                r = _trace_api.linear_bias_in_place(torch, args, kwargs)
                if r is not _trace_api.PASS:
                    return r
            if sdpa is not None and func is sdpa.func:
                r = sdpa.call(args, kwargs)
                if r is not NotImplemented:
                    return r
            if func is dropout:
                return _cuda_dropout(torch, dropout, args, kwargs)
            if below_autograd is not None and type(func) is packet and \
                    getattr(func, "_qualified_op_name", "") in _trace_api.NO_AUTOGRAD_META:
                # torch 1.13: an extension op without an autograd kernel
                # (torchvision::nms) is refused at the AutogradMeta key,
                # before the dispatch mode and its fallback see it
                guard = below_autograd()  # (a guard object on 1.13, not a context manager)
                try:
                    return func(*args, **kwargs)
                finally:
                    del guard
            if func in reads and args and getattr(args[0], "is_meta", False):
                T.warn("placeholder", getattr(func, "__name__", str(func)),
                       "a value read from a tensor without data: 0 was used")
                v = reads[func]
                if func is Tensor.item and not args[0].is_floating_point():
                    v = 0
                if func is Tensor.item and args[0].dtype == torch.bool:
                    v = False
                return v
            if func is Tensor.type:  # x.type(torch.cuda.FloatTensor), x.type()
                spec = T.legacy.type_call(args, kwargs, lambda t: bool(is_cuda(func, (t,), {})))
                if isinstance(spec, str):
                    return spec
                if spec is not None:
                    func, args, kwargs = Tensor.to, (args[0],) + spec[:2], {"non_blocking": spec[2]}
                    if spec[0] == "cpu" and func in answers:  # a device tensor to the host: its .to("cpu", dtype)
                        r = _answer(answers[func], func, args, kwargs)
                        if r is not _trace_api.PASS:
                            return r
            if T.legacy.default_cuda:  # after set_default_device("cuda")
                kwargs = T.legacy.device_default(func, args, kwargs)
            move = False
            if func is Tensor.cuda:
                args, kwargs, move = (args[0], target), {"non_blocking": kwargs.get("non_blocking", False)}, True
                func = Tensor.to
            elif func is Tensor.to and len(args) > 1 and (_is_cuda(args[1]) or type(args[1]) is int or
                                                          dev == "cpu" and args[1] is T.device_marker or
                                                          dev == "meta" and _is_meta_index(args[1]) or
                                                          dev == "meta" and args[1] is T.device_marker and
                                                          T.is_host(args[0])):
                # meta:N is the device as code that read it off a weight
                # names it (DDP: torch.device(device_type, device_ids[0]))
                # cpu mode: .to(x.device) of a device tensor x is a move to
                # the device, as device=x.device is below; meta mode: a host
                # placeholder .to(x.device) (FSDP's offloaded shards copied in
                # for their all-gather) is one too
                args, move = (args[0], target) + tuple(args[2:]), True
            if "device" in kwargs and (_is_cuda(kwargs["device"]) or _is_index(kwargs["device"])):
                # (device=local_rank: an index is a CUDA device)
                kwargs = dict(kwargs)
                kwargs["device"] = target
                move = True
            elif dev == "cpu" and "device" in kwargs and kwargs["device"] is T.device_marker:
                # cpu mode: device=x.device of a device tensor x (the marker,
                # T.device_marker) where the meta run says meta; both make
                # a device tensor. A host tensor's device, or a literal
                # "cpu", is the host (torch 2.x Adam/AdamW's foreach step:
                # torch.tensor(1.0, device="cpu"); torchvision's Normalize:
                # torch.as_tensor(mean, device=img.device)).
                move = True
            elif dev == "meta" and func in from_data and kwargs.get("device") is T.device_marker:
                # torch.tensor(data, device=x.device) of a device tensor x:
                # made on the device, with data's values (as device="cuda")
                move = True
            if not move:
                if dev == "meta" and T.on_offload_host(kwargs):
                    return _made_on_host(torch, T, func, args, kwargs, True)
                if dev == "meta" and T.host_made and func in host_factories and \
                        _trace_api.is_cpu(kwargs.get("device", "cpu")):
                    # DeepSpeed's CPU offload: its host buffers (rank 0's
                    # fp32 partitions, Adam's states, the gradients' copies)
                    # as host placeholders, not in this process's RAM, that
                    # answer .device as the host (DeepSpeedCPUAdam checks)
                    return _made_on_host(torch, T, func, args, kwargs, True)
                if dev == "meta" and _trace_api.is_cpu(kwargs.get("device")) and args and \
                        T.is_own(_common.local_shard(args[0])):
                    # to_empty(device="cpu") of a model built on meta (FSDP2
                    # with CPU offload asks for it): host placeholders, not
                    # the model's size in this process's RAM
                    return _made_on_host(torch, T, func, args, kwargs, False)
                if dev == "meta" and _is_own_meta(kwargs.get("device"), T.device_marker):
                    # device="meta" (or torch.device("meta")) in the
                    # program: its own meta tensor
                    T.own_meta += 1
                    try:
                        return func(*args, **kwargs)
                    finally:
                        T.own_meta -= 1
                return func(*args, **kwargs)
            if func is Tensor.to and (dev == "cpu" and not T.is_device_storage(args[0]) or
                                      dev == "meta" and T.where(args[0]) in (HOST, OWN)):
                # a host tensor is copied to the device (and one of the
                # program's own meta tensors, which a GPU refuses to copy
                # out of, is counted as if it were)
                kwargs = dict(kwargs)
                kwargs["copy"] = True
            T.redirect += 1
            try:
                out = func(*args, **kwargs)
                if func in from_data:
                    _made_from_data(torch, T, func, args, kwargs, out)
            finally:
                T.redirect -= 1
            return out

    kinds = _SubclassKinds(torch)
    copy_ = torch.ops.aten.copy_.default
    detach = torch.ops.aten.detach.default
    scalar = torch.ops.aten._local_scalar_dense.default

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            with T.lock:
                return self.record(func, types, args, kwargs)

        def record(self, func, types, args, kwargs):
            kind = kinds.of(types)
            if kind == "fake":
                # torch's own shape propagation (DTensor's): no memory
                return func(*args, **(kwargs or {}))
            if kind == "wrapper":
                # a wrapper subclass (DTensor's shards, a quantized weight):
                # it holds no storage of its own; its __torch_dispatch__
                # runs the ops on its inner tensors, which come here
                return NotImplemented
            if getattr(func, "namespace", "") == "c10d":  # a collective: nothing sent
                r = _trace_dist.collective(torch, T, func, args, kwargs or {})
                if r is not NotImplemented:
                    return r
            if T.device == "meta" and getattr(func, "namespace", "") == "_c10d_functional":
                r = _trace_dist.functional_alias(func, args, kwargs or {})
                if r is not NotImplemented:  # the tensor it was given, as on the GPU
                    for t in _outputs(r, kinds):  # a new view holds that storage too
                        if isinstance(t, Tensor):
                            T.on_output(t, str(func))
                    return r
            if func is detach and args and isinstance(args[0], (bool, int, float, complex)):
                # torch 1.13's Python dispatch hands a mode a wrapped number
                # (the scalar of `q * 0.125`, which autograd saves) as a
                # Python number; non-reentrant checkpointing's pack hook
                # detaches it. Its detach is the number as a tensor again.
                return torch.tensor(args[0])
            if T.device == "meta" and func is scalar and args and getattr(args[0], "is_meta", False):
                # a 0-d device tensor read as a number below the function
                # mode, where C++ takes it for a Scalar argument
                # (torch.full(size, stride[i]), Ultralytics' make_anchors)
                return _scalar(torch, T, args[0])
            if T.device == "meta" and func is copy_ and _host_copy(args):
                # copy_ from the device into a host tensor (C++ callers:
                # DDP's bucket indices): its known values, else zeros
                if not _trace_values.to_host(args[0], args[1]):
                    T.warn("placeholder", "copy_", "a value read from a tensor without data: 0 was used")
                return args[0]
            if T.device == "meta":
                args, kwargs = _lift_host(torch, T, func, args, kwargs)
            T.blocks.used(args, kwargs)
            if T.backwards and not T.param_written:  # a loop without torch.optim only
                _writes_param(T, func, args)
            ws = _sdpa_workspace(torch, T, sdpa, func, args)
            try:
                try:
                    if same_dtype is not None:
                        _trace_api.check_source_dtype(same_dtype, func, args)
                    out = sparse.call(func, args, kwargs or {}, ws) if sparse is not None else NotImplemented
                    if out is NotImplemented:
                        out = func(*args, **(kwargs or {}))
                    if sdpa is not None:  # meta mode on torch >= 2.0
                        out = _trace_torch2.outputs(torch, str(func), args, out)
                except (NotImplementedError, RuntimeError) as err:
                    name = str(func)
                    if not isinstance(err, NotImplementedError) and name not in _trace_api.REFUSED_ON_META:
                        raise
                    fb = _meta_fallback(name) if T.device == "meta" else None
                    fb = fb or _trace_api.AMP_FALLBACKS.get(name)
                    if fb is None:
                        raise
                    try:
                        out = fb(torch, *args, **(kwargs or {}))
                    except LookupError:  # the GPU refuses these inputs too
                        raise err
                    shaped = _trace_masks.data_shaped(torch, name, args)
                    if shaped is not None:
                        T.warn(_trace_masks.KIND, shaped[0], shaped[2], shaped[1])
            except Exception as err:
                # the latest op that failed; the end blames it only when its
                # error is the one that ends the program (_install_exit): a
                # failure the program caught and went on from is not why
                T.failure = (str(func), T.stack_id(), _first_sentence(err), err)
                raise
            if T.device == "meta":
                try:
                    counted = _trace_masks.after_op(func, args, out)  # routing marks: a mistake there is not the op's
                    if counted is not None:
                        T.warn(_trace_masks.kind_of(counted[1]), counted[0], counted[2], counted[1])
                    _trace_values.after_op(func, _trace_masks.op_name(func)[0], args, kwargs or {}, out)
                except Exception:
                    _debug()
            try:
                host = own = False
                if T.quiet:
                    dev_in, floats_only = False, False
                elif T.device == "cpu" and T.redirect == 0:
                    # cpu mode: an op's outputs are on the device when an input
                    # is, but for a copy into a host tensor (load_state_dict of
                    # a state dict loaded to the GPU into a host model: a
                    # device-to-host copy, the model stays on the host)
                    dev_in = not (func is copy_ and isinstance(args[0], Tensor) and _skey(args[0]) not in T.live) and \
                        any(isinstance(a, Tensor) and _skey(a) in T.live for a in _flat((args, kwargs or {}), []))
                    # or when DDP's C++ reducer makes its buckets (made on
                    # the weights' device: here the CPU, as its host-side
                    # int32 bookkeeping is; the buckets are the floats)
                    floats_only = not dev_in and T.forced is not None
                    dev_in = dev_in or floats_only
                else:
                    dev_in, floats_only = True, False
                    # meta mode: ops on host placeholders (weights made meta
                    # at construction, .half() of a model still on the host)
                    host = T.device == "meta" and (
                        T.hosting > 0 or (T.redirect == 0 and T.inputs_only(HOST, args, kwargs)))
                    # and the program's own meta tensors (a model built
                    # under torch.device("meta"), and what is made of them)
                    own = T.device == "meta" and T.redirect == 0 and not host and (
                        T.own_meta > 0 or T.inputs_only(OWN, args, kwargs))
                if dev_in:
                    op = str(func)
                    scalars = op in _trace_sdpa.HOST_SCALAR_OPS  # philox seed, offset
                    for t in _outputs(out, kinds):
                        if isinstance(t, Tensor) and (T.device == "cpu" or t.is_meta):
                            floating = t.is_floating_point()
                            if floats_only and not floating:
                                continue
                            cat = "other" if T.forced is not None and not floating else None
                            T.on_output(t, op, cat=cat, host=host or (scalars and _trace_sdpa.host_scalar(torch, t)), own=own)
                            if host and T.host_made:
                                # (while DeepSpeed offloads, what is made of
                                # its host tensors answers the host too)
                                T.offloaded(t)
            except Exception:
                _debug()
            del ws  # the backward kernel's scratch is freed as it returns
            return out

    # A param.data = x (Module._apply, optimizers) moves the tensor to x's storage.
    base = getattr(torch._C, "TensorBase", None) or torch._C._TensorBase  # renamed in 2.2
    base = base.data

    def _get(self):
        return base.__get__(self)

    def _set(self, v):
        if T.device == "meta" and isinstance(v, Tensor) and self.is_meta and not v.is_meta and \
                v.device.type == "cpu" and T.where(self) in (HOST, None):
            # a weight made a host placeholder at construction, given a
            # real host tensor (DLRM: emb.weight.data = torch.tensor(W)):
            # meta refuses a CPU tensor's storage, and the placeholder
            # stands for that host tensor as it did for the first
            v = _to_host_meta(torch, T, v)
        base.__set__(self, v)
        try:
            T.adopt(self)
        except Exception:
            _debug()

    Tensor.data = property(_get, _set)

    # Module._apply makes a new Parameter on the moved storage when the
    # tensor types differ (cpu -> meta); it shares the storage, no op runs.
    Parameter = torch.nn.Parameter
    orig_new = Parameter.__new__

    def __new__(cls, data=None, requires_grad=True):
        p = orig_new(cls, data, requires_grad)
        try:
            T.adopt(p)
        except Exception:
            _debug()
        return p

    Parameter.__new__ = staticmethod(__new__)
    _classify_buffers(torch, T)
    _install_resize(torch, T)
    if dev == "cpu":
        _install_deepcopy(torch, T)
    if dev == "meta":
        _install_fake_ptrs(torch, T)
        _install_own_meta(torch, T)
        _keep_ties(torch, T)
        _install_empty_weights(torch, T)
        _install_load(torch, T)
        _trace_safetensors.install(torch, T)
    T.modes = (Redirect(), Record())
    T.modes[0].__enter__()
    T.modes[1].__enter__()
    _install_threads(T, lambda: (Redirect(), Record()))


def _install_threads(T, modes):
    """A thread the program starts is traced too: a prefetch
    thread's .cuda() of the next batch is GPU memory too. PyTorch's modes
    are each thread's own (torch.cuda's current stream too,
    _trace_api.current_stream), so the thread enters new ones of its own
    before its run(); T.lock keeps the trace whole between threads."""
    orig = threading.Thread.start

    def start(self, *a, **k):
        run = self.run

        def traced_run(*ra, **rk):
            T.counts.side = True
            entered = []
            try:
                for m in modes():
                    m.__enter__()
                    entered.append(m)
            except Exception:
                _debug()  # the thread runs untraced rather than not at all
            try:
                return run(*ra, **rk)
            finally:
                for m in reversed(entered):
                    try:
                        m.__exit__(None, None, None)
                    except Exception:
                        _debug()

        self.run = traced_run
        return orig(self, *a, **k)

    start.__doc__ = orig.__doc__
    threading.Thread.start = start


# CUDA autocast's op lists (aten/src/ATen/autocast_mode.cpp), as the Python
# functions and Tensor methods a program calls: "lower" ops run in the
# autocast dtype, "fp32" ops in float32; "fp32opt" ones only when no dtype
# argument is given. Composite ops that reach a listed op inside ATen
# (einsum's bmm) are listed by their own name.
_AMP_LOWER = ("F.linear F.conv1d F.conv2d F.conv3d F.conv_transpose1d F.conv_transpose2d "
              "F.conv_transpose3d F.prelu F.scaled_dot_product_attention torch.matmul torch.mm "
              "torch.bmm torch.addmm torch.addbmm torch.baddbmm torch.addmv torch.addr torch.mv "
              "torch.chain_matmul torch.einsum torch.conv1d torch.conv2d torch.conv3d "
              "Tensor.matmul Tensor.__matmul__ Tensor.__rmatmul__ Tensor.mm Tensor.bmm Tensor.addmm "
              "Tensor.addbmm Tensor.baddbmm Tensor.addmv Tensor.addr Tensor.mv")
_AMP_FP32 = ("F.layer_norm F.group_norm F.cross_entropy F.nll_loss F.mse_loss F.l1_loss "
             "F.smooth_l1_loss F.huber_loss F.kl_div F.binary_cross_entropy_with_logits "
             "F.poisson_nll_loss F.cosine_embedding_loss F.hinge_embedding_loss F.margin_ranking_loss "
             "F.multilabel_margin_loss F.soft_margin_loss F.triplet_margin_loss F.multi_margin_loss "
             "F.cosine_similarity F.softplus torch.pow torch.exp torch.log torch.rsqrt torch.acos "
             "torch.asin torch.cosh torch.erfinv torch.expm1 torch.log10 torch.log2 torch.log1p "
             "torch.reciprocal torch.sinh torch.tan torch.cdist torch.dist torch.logsumexp "
             "torch.layer_norm torch.group_norm "
             "Tensor.pow Tensor.__pow__ Tensor.exp Tensor.log Tensor.rsqrt Tensor.acos Tensor.asin "
             "Tensor.cosh Tensor.erfinv Tensor.expm1 Tensor.log10 Tensor.log2 Tensor.log1p "
             "Tensor.reciprocal Tensor.sinh Tensor.tan Tensor.dist Tensor.logsumexp")
_AMP_FP32_OPT = ("F.softmax F.log_softmax torch.softmax torch.log_softmax torch.sum torch.prod "
                 "torch.cumsum torch.cumprod Tensor.softmax Tensor.log_softmax Tensor.sum "
                 "Tensor.prod Tensor.cumsum Tensor.cumprod")


class _Autocast(object):
    """CUDA autocast on the meta device, where torch's own does nothing (its
    dispatch key is only on CUDA tensors). While torch.autocast("cuda") /
    torch.cuda.amp.autocast is on, the inputs of a listed op are cast
    above autograd, as ATen's autocast does: the copies are made by a
    differentiable .to(dtype), saved by the op's backward like the GPU's;
    a weight's cast (a leaf that requires grad) is made once and kept
    until the outermost autocast region ends (torch.clear_autocast_cache)."""

    def __init__(self, torch, T):
        self.torch = torch
        self.T = T
        self.lists = {}
        ns = {"F": torch.nn.functional, "torch": torch, "Tensor": torch.Tensor}
        for names, kind in ((_AMP_LOWER, "lower"), (_AMP_FP32, "fp32"), (_AMP_FP32_OPT, "fp32opt")):
            for n in names.split():
                mod, attr = n.split(".")
                f = getattr(ns[mod], attr, None)
                if f is not None:
                    self.lists[f] = kind
        self.cache = {}  # id(weight) -> (weak ref, its cast)
        orig_clear = torch.clear_autocast_cache

        def clear_autocast_cache():
            self.cache = {}
            return orig_clear()

        torch.clear_autocast_cache = clear_autocast_cache

    def cast(self, func, args, kwargs):
        torch = self.torch
        kind = self.lists[func]
        if kind == "fp32opt":
            if kwargs.get("dtype") is not None:
                return args, kwargs
            kind = "fp32"
        to = torch.float32 if kind == "fp32" else torch.get_autocast_gpu_dtype()
        caching = kind == "lower" and torch.is_autocast_cache_enabled()
        return self.each(args, to, caching), dict((k, self.each(v, to, caching)) for k, v in kwargs.items())

    def each(self, x, to, caching):
        torch = self.torch
        if isinstance(x, (list, tuple)):
            return type(x)(self.each(y, to, caching) for y in x)
        if not isinstance(x, torch.Tensor) or not x.is_meta or x.dtype == to or \
                not x.is_floating_point() or x.dtype == torch.float64 or not self.T.is_device_storage(x):
            return x
        if caching and x.is_leaf and x.requires_grad:
            c = self.cache.get(id(x))
            if c is not None and c[0]() is x:
                return c[1]
            y = x.to(to)
            self.cache[id(x)] = (weakref.ref(x), y)
            self.T.classify(y, "autocast")  # a weight's copy, held to the region's end
            return y
        return x.to(to)


def _install_resize(torch, T):
    """A storage resized in place frees its memory and takes new memory
    below the dispatcher, where no op is seen: FSDP frees each unsharded
    parameter after its forward (resize_(0)) and refills it before the next
    all-gather (FSDP2's free_storage/alloc_storage, FSDP1's
    _free_storage/_alloc_storage, both through UntypedStorage.resize_).
    A device storage's resize is recorded as the free and the allocation
    the caching allocator makes for it."""
    cls = getattr(torch, "UntypedStorage", None)
    orig = getattr(cls, "resize_", None)
    if orig is None:
        return

    def resize_(self, size):
        r = orig(self, size)
        try:
            T.on_resize(self._cdata, int(size), "uint8")
        except Exception:
            _debug()
        return r

    cls.resize_ = resize_


def _install_own_meta(torch, T):
    """meta mode: what the program makes under torch.device("meta") (or
    torch.set_default_device("meta")) is its own meta tensor, not the
    device's: a model built there for deferred initialisation (torchtitan,
    FSDP's param_init_fn) holds no GPU memory until to_empty() makes it on
    the device. torch's DeviceContext, the mode those install at the bottom
    of the stack, gives a factory its device: it is followed (torch >= 2.0)."""
    try:
        from torch.utils._device import DeviceContext
    except ImportError:
        return
    orig = DeviceContext.__torch_function__

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(self.device, "type", None) != "meta" or self.device is T.device_marker or \
                (kwargs or {}).get("device") is not None:
            # (a device context of a device tensor's device is the GPU's)
            return orig(self, func, types, args, kwargs)
        T.own_meta += 1
        try:
            return orig(self, func, types, args, kwargs)
        finally:
            T.own_meta -= 1

    DeviceContext.__torch_function__ = __torch_function__


def _install_fake_ptrs(torch, T):
    """meta mode: a meta storage's data_ptr() is T.fake_ptr's, one of its
    own (a tensor's, _trace_api's answer, is its storage's plus its
    offset)."""
    cls = getattr(torch, "UntypedStorage", None)
    ptr = getattr(cls, "data_ptr", None)
    if ptr is None:
        return

    def data_ptr(self):
        if self.device.type == "meta":
            return T.fake_ptr(self._cdata)
        return ptr(self)

    cls.data_ptr = data_ptr


def _install_deepcopy(torch, T):
    """cpu mode: copy.deepcopy of a device tensor that is not a Parameter (a
    model's buffers, deep-copied for an EMA model) copies its storage below
    the dispatcher: a new storage, filled by copy_ through tensors that die
    at once, then set_ into the new tensor. The copy was recorded and freed
    at once, and the tensor then unknown (its next in-place write recorded
    as a new allocation). It is recorded as one allocation of the new
    tensor's storage, as the meta run's clone is (a meta tensor's deepcopy
    is a clone)."""
    orig = torch.Tensor.__deepcopy__

    def __deepcopy__(self, memo):
        if not T.is_device_storage(self):
            return orig(self, memo)
        with T.quietly():
            new = orig(self, memo)
        try:
            T.on_output(new, "aten.clone.default")
        except Exception:
            _debug()
        return new

    torch.Tensor.__deepcopy__ = __deepcopy__


def _classify_buffers(torch, T):
    """Module._apply (.cuda(), .half(), .to()) moves a module's buffers as
    well as its weights: what it leaves in _buffers is a buffer (GPT-2's
    causal masks, BatchNorm's running stats), not the input data an unowned
    .cuda() would be taken for. Each module's _apply (the children's too,
    called through this one) classifies its own."""
    Module = torch.nn.Module
    orig = Module._apply

    def _apply(self, fn, *a, **k):
        out = orig(self, fn, *a, **k)
        try:
            for b in self._buffers.values():
                if b is not None:
                    T.classify(b, "buffer")
        except Exception:
            _debug()
        return out

    Module._apply = _apply


def _keep_ties(torch, T):
    """cpu -> meta is not a shallow-copy-compatible move, so Module._apply
    makes a new Parameter per module where cpu -> cuda sets the old one's
    data in place. Two things follow. A weight two modules share (GPT-2's
    tied wte and lm_head) would be copied twice and come out untied: the
    outermost _apply moves each tensor once and re-ties what was shared.
    And an optimizer made before .cuda() (DreamBooth's, before accelerate's
    prepare) would keep the host Parameters, whose gradients never come:
    no states, no update. Weights made on the host are placeholders already
    (meta, compatible); real ones (a safetensors checkpoint's, put straight
    into _parameters by a loader) keep their Parameter object by swapping
    in the moved tensor (swap_tensors, torch 2.2 and later)."""
    Module = torch.nn.Module
    orig = Module._apply
    depth = [0]

    def _apply(self, fn, *a, **k):
        if depth[0] > 0:
            return orig(self, fn, *a, **k)
        owners, keep, memo = {}, [], {}
        for m in self.modules():
            for key, p in m._parameters.items():
                if p is not None:
                    owners.setdefault(id(p), []).append((m, key, p))
                    keep.append(p)

        def once(t):
            r = memo.get(id(t))
            if r is None:
                r = fn(t)
                memo[id(t)] = r
                keep.append(t)  # its id stays its own while memo holds it
            return r

        depth[0] += 1
        try:
            out = orig(self, once, *a, **k)
        finally:
            depth[0] -= 1
        for refs in owners.values():
            first = _same_parameter(torch, T, refs[0][2], refs[0][0]._parameters[refs[0][1]])
            for m, key, _ in refs:
                m._parameters[key] = first
        return out

    Module._apply = _apply


def _remap_moved(T, opt):
    """An optimizer made before .cuda() holds host Parameters the tracer
    could not keep (_same_parameter on torch < 2.2): it takes the moved
    ones, states included, as cpu -> cuda would have left them its own."""
    if not T.moved:
        return
    for g in opt.param_groups:
        ps = g["params"]
        for i, p in enumerate(ps):
            refs = T.moved.get(id(p))
            new = refs[1]() if refs is not None and refs[0]() is p else None
            if new is None:
                continue
            ps[i] = new
            if p in opt.state:
                opt.state[new] = opt.state.pop(p)


def _same_parameter(torch, T, old, new):
    """old's Python object holding new's tensor, as cpu -> cuda leaves it,
    where the move made a new Parameter of a real host one. The tracer holds
    new by a weak reference, which swap_tensors refuses: an unrecorded alias
    of it is swapped in, and old is then held as new was. Without
    swap_tensors (torch < 2.2) new is kept, and an optimizer holding old
    steps new instead."""
    if new is old or old.is_meta or not new.is_meta or type(old) is not torch.nn.Parameter or type(new) is not type(old):
        return new  # a subclass (bitsandbytes' Params4bit) moves by its own rules
    swap = getattr(getattr(torch, "utils", None), "swap_tensors", None)
    kept = dict(old.__dict__)
    try:
        if swap is None:
            raise NotImplementedError("torch.utils.swap_tensors")
        with T.quietly():
            swap(old, torch.Tensor._make_subclass(type(new), new.detach(), new.requires_grad))
    except Exception:
        # the optimizer's step takes new for old (_remap_moved)
        k = id(old)
        T.moved[k] = (weakref.ref(old, lambda _r, k=k: T.moved.pop(k, None)), weakref.ref(new))
        return new
    old.__dict__.update(kept)
    if new.grad is not None:  # a gradient the move carried (moved after a backward)
        old.grad = new.grad
    T.adopt(old)
    return old


def _to_host_meta(torch, T, t):
    """A meta tensor of t's shape and dtype, marked host: the real CPU
    tensor is freed as soon as the caller drops it."""
    T.hosting += 1
    try:
        with torch.no_grad():
            m = t.detach().to("meta")
    finally:
        T.hosting -= 1
    return m


def _install_empty_weights(torch, T):
    """Weights are never made for real (accelerate's init_empty_weights):
    each parameter and buffer a module registers becomes a meta host
    placeholder at once, so building a 7B model on the CPU holds one layer's
    transient tensor at most. .to("cuda")/.cuda() then copies it to the
    (meta) device, recorded as the GPU allocation it is, in the dtype of
    any .half()/.to(dtype) before. A tensor already on meta (the device,
    or a tied weight registered twice) is kept as it is."""
    Module = torch.nn.Module
    orig_param = Module.register_parameter
    orig_buffer = Module.register_buffer

    def register_parameter(self, name, param):
        orig_param(self, name, param)
        if param is None or getattr(param, "is_meta", True):
            return
        try:
            p = self._parameters[name]
            new = type(p)(_to_host_meta(torch, T, p), p.requires_grad)
            new.__dict__.update(p.__dict__)
            T.on_output(new, "", host=True)
            self._parameters[name] = new
        except Exception:
            _debug()  # a Parameter subclass of its own: left real

    def register_buffer(self, name, tensor, *a, **k):
        orig_buffer(self, name, tensor, *a, **k)
        if tensor is None or getattr(tensor, "is_meta", True) or not isinstance(tensor, torch.Tensor):
            return
        try:
            b = _to_host_meta(torch, T, tensor)
            T.on_output(b, "", host=True)
            self._buffers[name] = b
        except Exception:
            _debug()

    Module.register_parameter = register_parameter
    Module.register_buffer = register_buffer


def _install_load(torch, T):
    """torch.load reads no tensor data: each storage of the checkpoint is a
    meta storage of its size (a host placeholder, or a device allocation
    when map_location names the GPU). load_state_dict then copies shapes."""
    import torch.serialization as ser

    orig = getattr(ser, "_load", None)
    if orig is None:
        return

    class Records(object):
        def __init__(self, zf):
            self.zf = zf

        def get_storage_from_record(self, name, numel, *a, **k):
            return torch.empty(numel, dtype=torch.uint8, device="meta")

        def __getattr__(self, name):
            return getattr(self.zf, name)

    def _load(zip_file, map_location, *a, **k):
        with T.making(_is_cuda(map_location)):
            return orig(Records(zip_file), lambda s, loc: s, *a, **k)

    ser._load = _load


# Bounds on what a torch.load result is searched for device tensors.
MAX_LOADED = 100000
MAX_LOADED_DEPTH = 8


def _install_loaded(torch, T):
    """torch.load with map_location on the GPU (a state dict loaded
    straight to the device, as many training scripts do before
    load_state_dict): what it made counts as "loaded" (C events) until it
    turns out to be a parameter, a buffer or an optimizer state (a pickled
    model, a resumed optimizer), so the report can say what a checkpoint
    kept alive on the GPU holds, and the load-to-host lever what loading it
    to the host saves. Both modes."""
    import torch.serialization as ser

    def wrap(orig):
        def load(*a, **k):
            out = orig(*a, **k)
            try:
                for t in _loaded_tensors(torch, out, [], 0):
                    if T.is_device_storage(t):
                        T.classify(t, "loaded")
            except Exception:
                _debug()
            return out

        load.__doc__ = orig.__doc__
        return load

    # torch.load as the tracer left it (cpu mode's loads to the host as
    # the device), and torch.serialization.load for a program that calls it
    plain = getattr(ser, "load", None)
    if callable(getattr(torch, "load", None)):
        torch.load = wrap(torch.load)
    if callable(plain):
        ser.load = wrap(plain)


def _loaded_tensors(torch, obj, out, depth):
    """The tensors of a torch.load result (dicts, lists, tuples, modules),
    at most MAX_LOADED of them, MAX_LOADED_DEPTH deep."""
    if len(out) >= MAX_LOADED or depth > MAX_LOADED_DEPTH:
        return out
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            _loaded_tensors(torch, v, out, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _loaded_tensors(torch, v, out, depth + 1)
    elif isinstance(obj, torch.nn.Module):
        _loaded_tensors(torch, list(obj.state_dict(keep_vars=True).values()), out, depth + 1)
    return out


def _install_cuda(torch, T):
    cuda = torch.cuda
    name = os.environ.get(ENV_GPU_NAME) or "torchmem traced GPU"
    total = int(os.environ.get(ENV_GPU_BYTES) or 0)
    cc = _trace_sdpa._cc()  # TORCHMEM_TRACE_GPU_CC, sm90 without it
    major, minor = cc // 10, cc % 10

    class Props(object):
        def __init__(self):
            self.name = name
            self.total_memory = total
            self.major, self.minor = major, minor
            self.multi_processor_count = 132

    def const(v):
        return lambda *a, **k: v

    patch = {
        "is_available": const(True), "device_count": const(_trace_dist.gpus()), "current_device": const(0),
        "set_device": const(None), "synchronize": const(None),
        "empty_cache": lambda *a, **k: _empty_cache(T),
        "get_device_name": const(name), "get_device_properties": lambda *a, **k: Props(),
        "get_device_capability": const((major, minor)), "is_bf16_supported": const(major >= 8),
        "memory_allocated": lambda *a, **k: T.allocated,
        "max_memory_allocated": lambda *a, **k: T.peak,
        "memory_reserved": lambda *a, **k: T.cached,
        "max_memory_reserved": lambda *a, **k: max(T.peak, T.cached),
        "reset_peak_memory_stats": lambda *a, **k: setattr(T, "peak", T.allocated),
        "manual_seed": const(None), "manual_seed_all": const(None),
        "is_current_stream_capturing": const(False),  # no CUDA graph is captured (SyncBatchNorm asks)
    }
    for k, v in patch.items():
        setattr(cuda, k, v)


def _empty_cache(T):
    T.emit(["R"])  # the replay releases the cache there
    T.cached = T.allocated


def _writes_param(T, func, args):
    """A loop without torch.optim (_trace_api.backward_begins) updates its
    weights by hand: an in-place op (add_, sub_, copy_, _foreach_add_)
    writing a parameter's storage between two backward passes is that
    update, and makes them two steps."""
    if getattr(T, "optimizer_made", True):
        return
    parts = str(func).split(".")
    if len(parts) < 2 or not parts[1].endswith("_"):
        return
    for t in _flat(args[:1], []):
        e = T.live.get(_skey(t)) if isinstance(t, T.torch.Tensor) else None
        if e is not None and (e[4] or "").startswith("param"):
            T.param_written = True
            return


def _recompute_keeps_modules(T):
    """Non-reentrant checkpointing (torch >= 2.1) stops a block's
    recomputation as soon as the tensors the backward needs are made
    (_StopRecomputationError, early_stop): the modules entered are never
    left, and their names would stay on T.modules, naming the backward's
    and the optimizer's allocations after the last module recomputed.
    Each recomputation restores the stack it found."""
    try:
        import torch.utils.checkpoint as cp

        frame = cp._CheckpointFrame
    except (ImportError, AttributeError):
        return  # torch < 2.1: the whole block is recomputed, hooks balanced
    init = frame.__init__

    def __init__(self, recompute_fn, *a, **k):
        def recompute(*args, **kwargs):
            depth = len(T.modules)
            try:
                return recompute_fn(*args, **kwargs)
            finally:
                del T.modules[depth:]

        init(self, recompute, *a, **k)

    frame.__init__ = __init__


def _name_modules(T, module):
    """Names module and what is in it by their paths from the module the
    program called (model.layers.3.mlp), and returns module's. A module
    called on its own first (yolov5 builds its strides by calling each
    layer of its Sequential, not the model) names its parts from itself
    (conv, act); when a module holding it is later called as the outermost,
    the longer paths replace those, so the training forward's memory says
    model.2.m.0.cv1, not m.0.cv1. A shorter path never replaces a longer
    one (a block called alone after its model keeps model.layers.3.*)."""
    try:
        outer = not T.modules
        if outer:
            T.rooted.add(module)
        prefix = T.modules[-1] + "." if T.modules else ""
        for n, sub in module.named_modules():
            new = (prefix + n) if n else (T.modules[-1] + ".?" if T.modules else type(module).__name__)
            old = T.names.get(sub)
            if old is None or (outer and new.count(".") > old.count(".")):
                T.names[sub] = new
        return T.names.get(module, type(module).__name__)
    except Exception:
        return type(module).__name__


CUDNN_RNN_NOTE = ("on a GPU cuDNN runs it as one kernel whose reserve buffer for backward "
                  "is sized by cuDNN; traced here as ATen's step-by-step layer")


def _note_cudnn_rnn(torch, T, module):
    """A recurrent layer (LSTM, GRU, RNN) trained: on a GPU it runs as one
    cuDNN kernel (_cudnn_rnn) that keeps a reserve buffer of cuDNN's own
    size for backward; without cuDNN the trace records ATen's composite,
    step-by-step layer (meta) or the CPU kernel (cpu), whose saved tensors
    differ. Said once per layer (bounded by warn), so the report can say
    its recurrent activations are approximate."""
    try:
        if isinstance(module, torch.nn.RNNBase) and torch.is_grad_enabled() and module.training:
            T.warn("cudnnrnn", type(module).__name__, CUDNN_RNN_NOTE)
    except Exception:
        pass


# The tensors _host_forward looks at: a forward's first inputs.
MAX_HOST_CHECK = 16


def _host_forward(T, module, inputs):
    """A module's forward that runs on the host: its first parameter and
    its tensor inputs are host tensors (the program's own CPU tensors, meta
    mode's host placeholders), and none is the device's or unknown. A GPU
    run's forward phase (and its first cuBLAS workspace) begins with a
    forward on the device; TensorBoard's add_graph, a FLOPs count or a
    sanity check on the host model before .cuda() is no such forward."""
    torch = T.torch
    ts = [t for t in _flat(inputs, [])[:MAX_HOST_CHECK] if isinstance(t, torch.Tensor)]
    try:
        p = next(module.parameters(), None)
    except Exception:
        return False
    if p is not None:
        ts.append(p)
    if not ts:
        return False
    for t in ts:
        w = T.where(t)
        if w is DEVICE or (w is None and getattr(t, "device", None) is not None and t.device.type != "cpu"):
            return False  # the device's, or unknown (the program's own meta tensors, a DTensor)
    return True


def _install_phases(torch, T):
    import torch.nn.modules.module as mm
    import torch.autograd as ag

    def pre(module, inputs):
        T.iteration.pass_ran()
        if T.phase not in ("forward", "backward") and not _host_forward(T, module, inputs):
            T.set_phase("forward")
        name = T.names.get(module)
        if name is None or (not T.modules and module not in T.rooted):
            name = _name_modules(T, module)
        if module not in T.seen:
            T.seen.add(module)
            T.classify_module(module, False)
            _note_cudnn_rnn(torch, T, module)
        T.amp.module_enter()
        T.modules.append(name)
        T.blocks.enter(name, inputs)

    def post(module, inputs, output):
        if T.modules:
            T.blocks.leave(T.modules.pop(), output)
        T.amp.module_leave()

    mm.register_module_forward_pre_hook(pre)
    try:
        # torch >= 2.1: also when the forward raises, so a forward the
        # program caught an error from is left (its name is not on later ops)
        mm.register_module_forward_hook(post, always_call=True)
    except TypeError:
        mm.register_module_forward_hook(post)
    _recompute_keeps_modules(T)

    orig_backward = ag.backward
    depth = [0]

    def backward(*a, **k):
        if depth[0]:
            # reentrant checkpointing's own backward of a recomputed
            # segment, inside the backward pass: still the same phase
            return orig_backward(*a, **k)
        _trace_api.backward_begins(T)  # a loop without torch.optim ends too
        T.amp.close()
        T.iteration.pass_ran()
        T.set_phase("backward")
        T.modules = []
        T.blocks.reset()
        depth[0] += 1
        T.engine += 1
        T.engine_runs += 1
        try:
            return orig_backward(*a, **k)
        finally:
            depth[0] -= 1
            T.engine -= 1
            T.modules = []  # what a recompute left (see _recompute_keeps_modules)
            T.set_phase("after_backward")
            for m in list(T.seen):
                T.classify_module(m, False)

    ag.backward = backward
    _common.count_grad_passes(ag, T.iteration)

    import torch.optim.optimizer as om

    major = _torch_major(torch)

    def classify_params(opt):
        for g in opt.param_groups:
            for p in g["params"]:
                T.classify(p, "param")
                T.classify(p.grad, "grad")

    def step_pre(opt, args, kwargs):
        T.amp.close()
        T.in_step += 1
        _remap_moved(T, opt)
        if major >= 2:  # cpu mode too: it stands for the same GPU
            _cuda_foreach_default(opt)  # an inner optimizer too (ZeroRedundancyOptimizer's)
        if T.in_step == 1:
            T.set_phase("optimizer")
            classify_params(opt)
        return _with_closure(args, kwargs, lambda: after_closure(opt))

    def after_closure(opt):
        # the closure's backward made the gradients the step now uses
        T.set_phase("optimizer")
        classify_params(opt)

    def step_post(opt):
        T.in_step -= 1
        # an inner optimizer's states too: a wrapper's (ZeroRedundancyOptimizer's
        # partition of them) are its inner one's
        for st in opt.state.values():
            for v in _flat(st, []):
                if isinstance(v, torch.Tensor):
                    T.classify(v, "optstate")
        if T.in_step > 0:
            return
        counted = T.iteration.step(opt)
        T.done += counted
        T.set_phase("after_step")
        if counted and T.done >= T.steps:
            try:
                pending = _pending_states(torch, T, opt)
                if pending is not None:
                    T.emit(["Q", str(pending[0]), str(pending[1])])
            except Exception:
                _debug()
            T.end("steps", "", "%d optimizer steps traced" % T.done)

    reg_pre = getattr(om, "register_optimizer_step_pre_hook", None)
    reg_post = getattr(om, "register_optimizer_step_post_hook", None)
    if reg_pre is not None and reg_post is not None:
        reg_pre(step_pre)
        reg_post(lambda opt, a, k: step_post(opt))
        return
    orig_init = om.Optimizer.__init__
    wrapped = set()

    def __init__(self, *a, **k):
        orig_init(self, *a, **k)
        owner = next((c for c in type(self).__mro__ if "step" in c.__dict__), None)
        if owner is None or owner in wrapped:
            return
        wrapped.add(owner)
        step = owner.__dict__["step"]

        def traced_step(opt, *a, **k):
            a, k = step_pre(opt, a, k) or (a, k)
            try:
                return step(opt, *a, **k)
            finally:
                step_post(opt)

        owner.step = traced_step

    om.Optimizer.__init__ = __init__


def _with_closure(args, kwargs, done):
    """optimizer.step(closure): the step's (args, kwargs) with the closure
    wrapped so that done() runs when it returns (its forward and backward
    are the model's; what follows is the optimizer's), or None when there
    is no closure."""
    args, kwargs = tuple(args or ()), dict(kwargs or {})

    def traced(closure):
        def traced_closure(*a, **k):
            try:
                return closure(*a, **k)
            finally:
                try:
                    done()
                except Exception:
                    _debug()
        return traced_closure

    if args and callable(args[0]):
        return (traced(args[0]),) + args[1:], kwargs
    if callable(kwargs.get("closure")):
        kwargs["closure"] = traced(kwargs["closure"])
        return args, kwargs
    return None


def _pending_states(torch, T, opt):
    """(bytes, parameters): the optimizer states a longer run makes for
    trainable parameters that got no gradient in the traced steps
    (wav2vec2's LayerDrop skips whole layers a step; a branch not taken),
    whose states an optimizer makes at their first gradient. Sized as the
    states it made for the others, per byte of parameter. None: none."""
    with_states = states = missing = count = 0
    for g in opt.param_groups:
        for p in g["params"]:
            if not isinstance(p, torch.Tensor) or not p.requires_grad or not T.is_device_storage(p):
                continue
            nbytes = p.numel() * p.element_size()
            st = [v for v in _flat(opt.state.get(p, {}), []) if isinstance(v, torch.Tensor) and T.is_device_storage(v)]
            if st:
                with_states += nbytes
                states += sum(v.numel() * v.element_size() for v in st)
            else:
                missing += nbytes
                count += p.numel()
    if not missing or not with_states or not states:
        return None
    return int(missing * states // with_states), count


def _torch_major(torch):
    try:
        return int(torch.__version__.split(".")[0])
    except ValueError:
        return 0


def _cuda_foreach_default(opt):
    """torch 2.x optimizers left at foreach=None pick the multi-tensor
    (foreach) path when every parameter is on CUDA and the step is not
    differentiable; on meta tensors they would pick the single-tensor one,
    whose temporaries are smaller. Decide as on the GPU being traced."""
    for g in opt.param_groups:
        if "foreach" in g and g["foreach"] is None and not g.get("fused") and not g.get("differentiable"):
            g["foreach"] = True


def _install_foreach(torch, T):
    """meta mode: torch's foreach helpers take meta for a device without
    foreach kernels, where the GPU has them: clip_grad_norm_(foreach=True)
    (torchtitan's every step) raised "can't use the foreach API on meta
    tensors", and at foreach=None it took the per-tensor norms the GPU does
    not. The device list _device_has_foreach_support reads gets meta
    (optimizers decide by their own import of it: _cuda_foreach_default)."""
    if T.device != "meta":
        return
    fu = getattr(getattr(torch, "utils", None), "_foreach_utils", None)
    devices = getattr(fu, "_get_foreach_kernels_supported_devices", None)
    if devices is None:
        return  # torch < 2.1: clip_grad_norm_ has no foreach path

    def with_meta():
        return list(devices()) + ["meta"]

    fu._get_foreach_kernels_supported_devices = with_meta


def _install_data(torch, T):
    # DataLoader(pin_memory=True) asks torch.cuda, which now says yes.
    try:
        import torch.utils.data._utils.pin_memory as pm

        pm.pin_memory = lambda data, *a, **k: data
    except Exception:
        _debug()


def _install_compile(torch, T):
    """torch.compile (2.x) returns what it is given, run eagerly: TorchDynamo
    cannot trace through the tracer's modes, and on meta tensors Inductor
    would compile for no device. One W line says so: the prediction is the
    eager program's, and a compiled one (fused kernels, fewer saved
    activations, a CUDA-graph pool with mode="reduce-overhead") differs."""
    orig = getattr(torch, "compile", None)
    if orig is None:
        return
    said = []

    def note(what):
        if not said:
            said.append(what)
            T.warn("compile", what, "torch.compile ran eagerly under the tracer: "
                   "the compiled program's memory is predicted as the eager program's")

    def compile(model=None, *a, **k):
        if model is None:  # @torch.compile(mode=...) as a decorator factory
            return compile
        if isinstance(model, torch.nn.Module) or not callable(model):
            note("torch.compile")
            return model
        # a function (libraries compile small helpers as they are imported:
        # DeepSpeed's MoE gating): said once one is called, not before
        @functools.wraps(model)
        def compiled(*a, **k):
            note("torch.compile")
            return model(*a, **k)

        return compiled

    compile.__doc__ = orig.__doc__
    torch.compile = compile
    Module = torch.nn.Module
    if hasattr(Module, "compile"):  # torch >= 2.2: model.compile() in place

        def module_compile(self, *a, **k):
            note("Module.compile")

        Module.compile = module_compile


def _install_jit_trace(torch, T):
    """meta mode: torch.jit.trace (and trace_module) cannot trace the
    tracer's tensors without data (torch's meta kernels read the shapes jit
    tracing turns into tensors: "tensor(False)", or an internal assert on
    1.13). On a GPU host a program jit-traces its model for TensorBoard's
    add_graph (bubbliiiing's LossHistory, before .cuda()) or to train the
    traced module: here the trace that fails returns what it was given, to
    run eagerly (the same memory, as for torch.compile), and one W line
    says so."""
    jit = getattr(torch, "jit", None)
    if jit is None:
        return

    inside = [0]

    def wrap(orig):
        def traced(func, *a, **k):
            if inside[0]:  # trace calls trace_module: one note, the outer one's
                return orig(func, *a, **k)
            prev, depth = T.failure, len(T.modules)
            inside[0] += 1
            try:
                return orig(func, *a, **k)
            except Exception:
                T.failure = prev  # not the program's failure: it goes on
                del T.modules[depth:]  # the forwards it left (torch < 2.1 calls no hook on a raise)
                T.warn("jittrace", orig.__name__, "torch.jit.trace cannot run on tensors without data: "
                       "the module was returned as it is, to run eagerly")
                return func
            finally:
                inside[0] -= 1

        traced.__doc__ = orig.__doc__
        traced.__name__ = orig.__name__
        return traced

    for name in ("trace", "trace_module"):
        if callable(getattr(jit, name, None)):
            setattr(jit, name, wrap(getattr(jit, name)))


def _raised_from(value, err, depth=16):
    """value, the error that ends the program, is err or was raised while
    handling it (its cause or context, a few links deep): an op's failure
    re-raised as the program's own (torch.jit.trace's, a framework's
    wrapper) is still the op's."""
    for _ in range(depth):
        if value is None:
            return False
        if value is err:
            return True
        value = value.__cause__ or value.__context__
    return False


def _install_exit(T):
    import atexit

    def at_exit():
        if T.failure is not None and sys.exc_info()[0] is not None:
            return
        T.end("exit", "", "the program ended after %d optimizer steps" % T.done, exit_now=False)

    prev = sys.excepthook

    def hook(tp, value, tb):
        op, sid, msg = "", None, "%s: %s" % (tp.__name__, value)
        where = _common.program_frame(tb, T.skip)  # the program's innermost line
        if T.failure is not None and _raised_from(value, T.failure[3]):
            op = T.failure[0]
            msg = T.failure[2]
        if where is not None:
            sid = T.stacks.get((where,))
            if sid is None:
                sid = len(T.stacks) + 1
                T.stacks[(where,)] = sid
                T.w.line(["S", str(sid), _clean(where)])
        if not T.ended:
            T.emit(["E", "error", _clean(op), str(sid or 0), _clean(msg)[:500]])
            T.ended = True
            T.w.close()
        prev(tp, value, tb)

    sys.excepthook = hook
    atexit.register(at_exit)


