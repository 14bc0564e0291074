_pre, _post = [], []


def register_optimizer_step_pre_hook(fn):
    _pre.append(fn)


def register_optimizer_step_post_hook(fn):
    _post.append(fn)


class Optimizer(object):
    def step(self):
        for fn in _pre:
            fn(self, (), {})
        out = self._step()
        for fn in _post:
            fn(self, (), {})
        return out
