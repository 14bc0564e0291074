# Two reference cycles holding tensors, made unreachable and collected: a
# node that points to itself, and a closure that refers to itself. Then
# whether their tensors were freed. A list cycle without tensors is not
# reported.
import gc
import time
import weakref

import torch


class Node(object):
    def __init__(self):
        self.me = self
        self.buf = torch.zeros(1024, 1024)  # 4 MiB float32


def make():
    buf = torch.ones(256)  # 1 KiB

    def again():  # line 21: the creating line of the closure's cycle
        return again, buf

    return again, weakref.ref(buf)


n = Node()
refs = [weakref.ref(n.buf)]
del n
f, r = make()
refs.append(r)
del f, r
plain = [[]]
plain[0].append(plain)
del plain
gc.collect()
time.sleep(0.5)  # the hook's thread frees what the collection saved
print("freed", all(r() is None for r in refs))
