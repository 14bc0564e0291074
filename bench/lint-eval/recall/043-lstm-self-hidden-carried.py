# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pytorch/pytorch/issues/2769
# pattern: LSTM keeps self.hidden across batches; memory explodes during training
# expect: TM016
import torch
import torch.nn as nn

class LSTM(nn.Module):
    def __init__(self, input_len=1024, hidden_len=1024, target_size=101):
        super(LSTM, self).__init__()
        self.hidden_len = hidden_len
        self.lstm = nn.LSTM(input_len, hidden_len, batch_first=True)
        self.hidden2class = nn.Linear(hidden_len, target_size)
        self.hidden = self.init_hidden()

    def init_hidden(self):
        return (torch.zeros(1, 1, self.hidden_len), torch.zeros(1, 1, self.hidden_len))

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x, self.hidden)
        return self.hidden2class(lstm_out[:, -1, :])

def train(train_data, model, criterion, optimizer):
    for i, (input, target) in enumerate(train_data):
        output = model(input)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
