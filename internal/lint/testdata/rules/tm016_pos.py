# Hidden states fed back without .detach().
import torch
import torch.nn as nn


class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(input_size=1, hidden_size=32, num_layers=1, batch_first=True)
        self.out = nn.Linear(32, 1)

    def forward(self, x, h_state):
        r_out, h_state = self.rnn(x, h_state)
        return self.out(r_out), h_state


# MorvanZhou/PyTorch-Tutorial 403 (issue #57): without `h_state = h_state.data`
# backward fails; the reporter "fixed" it with retain_graph=True.
def train_regression(rnn, optimizer, loss_func, steps):
    h_state = None
    for step in range(steps):
        x = torch.randn(1, 10, 1)
        y = torch.randn(1, 10, 1)
        prediction, h_state = rnn(x, h_state)  # want: TM016
        loss = loss_func(prediction, y)
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()


# A cell stepped over a stream, one update per chunk (truncated BPTT
# without the truncation).
def train_stream(chunks, optimizer):
    cell = nn.LSTMCell(16, 32)
    h = torch.zeros(4, 32)
    c = torch.zeros(4, 32)
    for x, y in chunks:
        h, c = cell(x, (h, c))  # want: TM016
        loss = ((h - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
