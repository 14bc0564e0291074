"""The current stream is each thread's own, as CUDA's: a prefetch thread
inside torch.cuda.stream(s) leaves the main thread's tensor on the default
stream. The thread's tensor and the main thread's later one under the same
stream share that stream's segment; the main thread's first, freed, is the
default stream's: 8 MiB allocated, 40 MiB reserved (20 MiB if the stream
were one for the process: every tensor on stream s, one segment)."""
import threading

import torch

s = torch.cuda.Stream()
entered, go = threading.Event(), threading.Event()
held = []


def prefetch():
    with torch.cuda.stream(s):
        entered.set()
        go.wait()
        held.append(torch.empty(4 << 20, dtype=torch.uint8, device="cuda"))  # stream 1: a 20 MiB segment


t = threading.Thread(target=prefetch)
t.start()
entered.wait()
a = torch.empty(4 << 20, dtype=torch.uint8, device="cuda")  # the default stream: a 20 MiB segment
assert torch.cuda.current_stream() == torch.cuda.default_stream()
go.set()
t.join()
del a
with torch.cuda.stream(s):
    c = torch.empty(4 << 20, dtype=torch.uint8, device="cuda")  # stream 1: the thread's segment
