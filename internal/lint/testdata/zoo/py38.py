# Syntax from Python 3.8: nothing here is a memory problem.
import asyncio
import torch
from typing import List


async def fetch(model, batches: List[torch.Tensor]):
    async with asyncio.Lock():
        out = []
        async for b in agen(batches):
            if (n := len(out)) > 3:
                break
            out.append(await asyncio.sleep(0, result=b))
        return out


async def agen(xs):
    for x in xs:
        yield x


class Config:
    lr: float = 1e-3
    steps = [i * 2 for i in range(10)]
    table = {k: v for k, v in zip("ab", (1, 2))}

    @property
    def name(self):
        return f"{self.lr!r:>10} {self.steps[-1]}"


def many(*args, key=None, **kwargs):
    global counter
    counter = 0
    x = [*args, *kwargs.values()]
    y = {**kwargs, "k": key}
    z = lambda a, b=2, *c, d, **e: a + b
    del x[0]
    assert y, "empty"
    with open(__file__) as f, open(__file__) as g:
        data = f.read() + g.read()
    try:
        raise ValueError(data[:1])
    except (ValueError, TypeError) as err:
        print(err)
    finally:
        pass
    while counter < 3:
        counter += 1
    else:
        counter = -1
    return x[1:2, ...] if z else y, 0b101, 1e999, 10 ** 40, b"bytes", 1j, ...


counter = 0
