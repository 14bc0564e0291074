"""A CTC head (torchmem's own test script, as speech models fine-tune
one: wav2vec2's Wav2Vec2ForCTC, DeepSpeech): a convolution over features, log
softmax over 32 labels, F.ctc_loss with the targets concatenated, two
steps of Adam. argv[1]: "known" gives the target lengths from the host
(the longest 17), the targets concatenated; "device" draws the lengths on
the device (not known on meta: taken as the padded targets' 20);
argv[2] (optional) "large": 64 labels over 300 frames, the CUDA
backward's large path; "big": batch 16 over 1,500 frames (30 s of
wav2vec2's), targets up to 200 long, where CTC's own tensors show in the
peak (bench/device/trace_real.sh's ctc row)."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

dev = "cuda" if torch.cuda.is_available() else "cpu"
B, T, FEAT, LABELS = 4, 50, 20, 32
LENGTHS = [12, 17, 9, 15]
if sys.argv[2:] == ["large"]:
    T, LABELS = 300, 64
elif sys.argv[2:] == ["big"]:
    B, T = 16, 1500
    LENGTHS = [200 - 7 * i for i in range(B)]


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(FEAT, 64, 3, padding=1)
        self.out = nn.Linear(64, LABELS)

    def forward(self, x):
        return self.out(torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2))


torch.manual_seed(0)
m = Head().to(dev)
opt = torch.optim.Adam(m.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(B, T, FEAT, device=dev)
    if sys.argv[1] == "known":
        lengths = torch.tensor(LENGTHS).to(dev)
        targets = torch.randint(1, LABELS, (sum(LENGTHS),), device=dev)
    else:
        lengths = torch.randint(5, 18, (B,), device=dev)
        targets = torch.randint(1, LABELS, (B, 20), device=dev)
    input_lengths = torch.full((B,), T, dtype=torch.long, device=dev)
    log_probs = F.log_softmax(m(x), dim=-1, dtype=torch.float32).transpose(0, 1)
    loss = F.ctc_loss(log_probs, targets, input_lengths, lengths, blank=0, zero_infinity=True)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("ctc loss", loss.shape)
