# Syntax from Python 3.10-3.12 (match, except*, type aliases, generics,
# nested f-strings); linted only by interpreters that have it.
import torch

type Tensorish = torch.Tensor | list[float]


class Box[T]:
    def __init__(self, item: T):
        self.item = item


def first[T](xs: list[T]) -> T:
    return xs[0]


def handle(cmd, model, x):
    match cmd:
        case {"op": "eval", **rest}:
            with torch.no_grad():
                return model(x), rest
        case [a, b, *others] if a:
            return a, b, others
        case Box(item=torch.Tensor() as t):
            return t
        case _:
            return None


def grouped():
    try:
        pass
    except* ValueError as eg:
        print(f"{'nested ' + f'{eg!r}'}")
