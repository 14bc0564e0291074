# Unit tests and one-off forwards: TM001 stays silent (issue 21, item 1).
# Shapes follow torchvision's test_models.py style (a model built, put in
# eval mode, called once or over a few inputs, the output checked).
import unittest

import torch
import torch.nn as nn


class TestResNet(unittest.TestCase):
    def setUp(self):
        self.model = nn.Sequential(nn.Linear(8, 4), nn.ReLU())

    def test_forward_shapes(self):
        self.model.eval()
        for batch in [torch.randn(2, 8), torch.randn(5, 8)]:
            out = self.model(batch)
            self.assertEqual(out.shape[1], 4)

    def check_val_loader(self, val_loader):
        model = self.model
        for x in val_loader:
            model(x)


def test_eval_mode_is_deterministic():
    model = nn.Sequential(nn.Linear(8, 4), nn.Dropout(0.5))
    model.eval()
    x = torch.randn(3, 8)
    for _ in range(3):
        assert torch.equal(model(x), model(x))


def predict(net, x):
    # one forward outside any loop: one batch's graph, gone with the output
    net.eval()
    return net(x)


def export(model, example):
    model.eval()
    out = model(example)
    return torch.jit.trace(model, example), out
