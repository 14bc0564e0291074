# A thread dies of an exception, then the main thread of a CPU "OOM".
import threading

import torch


def bad():
    raise ValueError("thread failed")


t = threading.Thread(target=bad, name="loader-thread")
t.start()
t.join()
x = torch.zeros(4)
raise RuntimeError("CUDA out of memory. Tried to allocate 372.53 GiB (fake, raised by the test)")
