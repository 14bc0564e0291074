# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/MorvanZhou/PyTorch-Tutorial/issues/57
# pattern: without `h_state = h_state.data` the next backward fails; retain_graph=True 'fixes' it by keeping every graph
# expect: TM016
import torch
from torch import nn

class RNN(nn.Module):
    def __init__(self):
        super(RNN, self).__init__()
        self.rnn = nn.RNN(input_size=1, hidden_size=32, num_layers=1, batch_first=True)
        self.out = nn.Linear(32, 1)

    def forward(self, x, h_state):
        r_out, h_state = self.rnn(x, h_state)
        return self.out(r_out), h_state

rnn = RNN()
optimizer = torch.optim.Adam(rnn.parameters(), lr=0.02)
loss_func = nn.MSELoss()
h_state = None
for step in range(100):
    x, y = make_batch(step)
    prediction, h_state = rnn(x, h_state)
    loss = loss_func(prediction, y)
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
