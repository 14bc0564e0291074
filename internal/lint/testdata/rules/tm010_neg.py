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


def log_validation(args):
    pipeline = AutoPipelineForText2Image.from_pretrained(args.model).to("cuda")
    images = []
    for i in range(len(args.validation_prompts)):
        with torch.autocast("cuda"):
            image = pipeline(args.validation_prompts[i], num_inference_steps=20).images[0]
        images.append(image)
    return images


@torch.no_grad()
def eval_losses(model, eval_dataloader):
    losses = []
    for batch in eval_dataloader:
        outputs = model(**batch)
        losses.append(outputs.loss)
    return torch.stack(losses).mean()
