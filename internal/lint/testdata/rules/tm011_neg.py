import torch

state = torch.load("checkpoint.pt", map_location="cpu")
state2 = torch.load("checkpoint.pt", "cpu")
loc = "cuda:0"
state3 = torch.load("checkpoint.pt", map_location=loc, weights_only=True)
kwargs = {"map_location": "cpu"}
state4 = torch.load("checkpoint.pt", **kwargs)
state5 = torch.load(
    "checkpoint.pt",
)  # torchmem: ignore[TM011]
scripted = torch.jit.load("model.pt", map_location="cpu")
import pickle
obj = pickle.load(open("x.pkl", "rb"))
# A single-process training script resuming on the device it saved from: not
# a memory problem worth a finding.
state6 = torch.load("last.pt")
