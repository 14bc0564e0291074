# pytorch/pytorch#2769: the LSTM state lives on the module and forward feeds
# it back; the training loop never resets it.
import torch
import torch.nn as nn


class LSTM(nn.Module):
    def __init__(self, n=16):
        super().__init__()
        self.n = n
        self.lstm = nn.LSTM(n, n, batch_first=True)
        self.head = nn.Linear(n, 2)
        self.hidden = self.init_hidden()

    def init_hidden(self):
        return (torch.zeros(1, 1, self.n), torch.zeros(1, 1, self.n))

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x, self.hidden)  # want: TM016
        return self.head(lstm_out[:, -1, :])


def train(train_data, model, criterion, optimizer):
    for i, (x, target) in enumerate(train_data):
        output = model(x)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
