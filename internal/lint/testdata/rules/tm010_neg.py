import torch

device = "cuda"


@torch.no_grad()
def collect(model, val_loader):
    all_hidden = []
    preds = []
    for batch in val_loader:
        outputs = model(**batch, output_hidden_states=True)
        all_hidden.append(outputs.hidden_states[-1].detach().cpu())
        preds.append(outputs.logits.argmax(-1).cpu().numpy())
        preds.extend(outputs.logits.argmax(-1).tolist())
    return all_hidden, preds


@torch.no_grad()
def per_batch(model, val_loader):
    for batch in val_loader:
        feats = []
        feats.append(model(batch))
        print(torch.stack(feats).mean().item())
