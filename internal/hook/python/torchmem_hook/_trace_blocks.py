"""What the trace says of the blocks of a model (the numbered modules: a
ModuleList's or a Sequential's members, model.layers.3), for the what-if
of gradient checkpointing (estimate's checkpoint lever):

  O id module   the storage is what the block returned from its forward
                (a checkpointed block keeps it);
  L id n        the block's forward used the storage last when n
                allocations and frees had been written (a checkpointed
                block, whose forward saves nothing for the backward,
                drops it about then);
  I id module   the storage was given to the block's forward, positionally
                (a checkpointed block keeps its inputs until its backward
                has made its activations again: under autocast the
                float32 hidden state a block is given is otherwise freed
                in the forward, its bf16 copies saved instead).

Only the outermost block a forward runs in is followed, and only in the
forward phase: a recomputation in the backward (the program's own
checkpointing) is the backward's.
"""

from torchmem_hook import _common

# the tensors of a block's output or input said: a hidden state and a few
# more (a layer's attention weights or mask, a down block's skip
# connections)
MAX_RETURNED = 16


def numbered(name):
    return name.rpartition(".")[2].isdigit()


class Blocks(object):
    def __init__(self, tracer, flat, skey, device):
        self.T = tracer
        self.flat = flat
        self.skey = skey
        self.device = device
        self.depth = 0  # numbered modules entered (the outermost counts)
        self.made = []  # (allocation id, storage key) made in the outermost block
        self.uses = {}  # storage key -> allocations and frees written at its last use

    def enter(self, name, inputs=()):
        if self.T.phase == "forward" and numbered(name):
            self.depth += 1
            if self.depth == 1:
                self.said(name, inputs, "I")

    def leave(self, name, output):
        if self.depth == 0 or self.T.phase != "forward" or not numbered(name):
            return
        self.depth -= 1
        self.returned(name, output)
        if self.depth == 0:
            self.flush()

    def reset(self):
        """The backward begins: a forward that raised left its blocks."""
        self.depth = 0
        self.made = []
        self.uses = {}

    def made_now(self, aid, key):
        if self.depth:
            self.made.append((aid, key))
            self.uses[key] = self.T.events

    def used(self, args, kwargs):
        """An op's inputs (and the lists of them it takes) are used now."""
        if not self.uses:
            return
        n = self.T.events
        for a in args:
            self._use(a, n)
        if kwargs:
            for a in kwargs.values():
                self._use(a, n)

    def _use(self, a, n):
        if isinstance(a, (list, tuple)):
            for x in a:
                self._use(x, n)
            return
        if not isinstance(a, self.T.torch.Tensor):
            return
        try:
            key = self.skey(a)
        except Exception:  # a tensor without a storage
            return
        if key in self.uses:
            self.uses[key] = n

    def returned(self, name, output):
        self.said(name, output, "O")

    def said(self, name, tensors, event):
        """An O or I event for each device storage among tensors."""
        T = self.T
        try:
            for t in self.flat(tensors, [])[:MAX_RETURNED]:
                if isinstance(t, T.torch.Tensor):
                    e = T.live.get(self.skey(t))
                    if e is not None and e[0] >= 0 and e[3] is self.device:
                        T.emit([event, str(e[0]), _common.one_line(name)])
        except Exception:  # a tensor subclass without a storage
            pass

    def flush(self):
        T = self.T
        for aid, key in self.made:
            e = T.live.get(key)
            if e is not None and e[0] == aid:
                T.emit(["L", str(aid), str(self.uses.get(key, 0))])
        self.made = []
        self.uses = {}
