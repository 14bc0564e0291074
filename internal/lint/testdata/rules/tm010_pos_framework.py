# No CUDA named in the file: the device is the caller's (or the training
# framework's) choice, on the GPU wherever there is one.
import torch


def predict(model, dataloader):
    predictions = []
    model.eval()
    with torch.no_grad():
        for x, y in dataloader:
            out = model(x)
            predictions.append(out)  # want: TM010
    return torch.cat(predictions)


def validate(model, dl, loss_func):
    model.eval()
    val_preds = []
    with torch.no_grad():
        for xb, yb in dl:
            out = model(xb)
            val_preds.append(out.detach())  # want: TM010
    return torch.cat(val_preds)
