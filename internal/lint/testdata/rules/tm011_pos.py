import torch

state = torch.load("checkpoint.pt")  # want: TM011
model_state = torch.load(open("w.pt", "rb"), weights_only=True)  # want: TM011
scripted = torch.jit.load("model.pt")  # want: TM011
état = {"clé": torch.load("é.pt")}  # want: TM011
