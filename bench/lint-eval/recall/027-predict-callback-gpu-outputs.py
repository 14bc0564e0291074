# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/sktime/pytorch-forecasting/pull/2086
# pattern: PredictCallback appends batch outputs to a list on the GPU for the whole prediction epoch
# expect: TM010
import torch

def predict(model, dataloader):
    predictions = []
    model.eval()
    with torch.no_grad():
        for x, y in dataloader:
            out = model(x)
            predictions.append(out)
    return torch.cat(predictions)
