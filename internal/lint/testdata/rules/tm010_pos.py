import torch

device = "cuda"


@torch.no_grad()
def collect(model, val_loader):
    all_hidden = []
    all_attn = []
    for batch in val_loader:
        outputs = model(**batch, output_hidden_states=True, output_attentions=True)
        all_hidden.append(outputs.hidden_states)  # want: TM010
        all_attn += [outputs.attentions]  # want: TM010
    return all_hidden, all_attn


def predict(model, test_loader):
    preds = []
    model.eval()
    with torch.inference_mode():
        for x in test_loader:
            logits = model(x.to(device))
            preds.append(logits)  # want: TM010
    return torch.cat(preds)


def log_validation_latents(args):
    pipeline = AutoPipelineForText2Image.from_pretrained(args.model).to("cuda")
    latents = []
    for i in range(len(args.validation_prompts)):
        out = pipeline(args.validation_prompts[i], output_type="pt").images
        latents.append(out)  # want: TM010
    return latents
