# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/fastai/fastai/issues/2337
# pattern: get_preds keeps every batch's predictions/targets on the GPU (.detach() but not to_detach/cpu): OOM on big validation sets
# expect: TM010
import torch

def validate(model, dl, loss_func):
    model.eval()
    val_preds, val_targets = [], []
    with torch.no_grad():
        for xb, yb in dl:
            out = model(xb)
            val_preds.append(out.detach())
            val_targets.append(yb.detach())
    return torch.cat(val_preds), torch.cat(val_targets)
