import torch
import torch.distributed as dist
from tqdm import tqdm


class Trainer:
    def __init__(self, model, optimizer, train_loader, val_loader, device):
        self.model, self.optimizer = model, optimizer
        self.train_loader, self.val_loader, self.device = train_loader, val_loader, device
        self.history = {"train": [], "val": []}

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        scores, total = [], 0.0
        for batch in tqdm(self.val_loader, desc="val"):
            logits = self.model(batch["x"].to(self.device))
            scores.append(torch.sigmoid(logits).cpu().numpy())
            total += logits.float().mean().item()
        self.model.train()
        return scores, total

    def fit(self, epochs, accum=1):
        for epoch in range(epochs):
            self.model.train()
            running = torch.zeros((), device=self.device)
            for step, batch in enumerate(tqdm(self.train_loader)):
                out = self.model(batch["x"].to(self.device))
                loss = out.loss / accum
                loss.backward()
                running += loss.detach()
                if (step + 1) % accum == 0 or step + 1 == len(self.train_loader):
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                    self.optimizer.step()
                    self.optimizer.zero_grad(set_to_none=True)
            dist.all_reduce(running)
            self.history["train"].append(running.item())
            _, val = self.validate()
            self.history["val"].append(val)


def test(model, test_loader, device):
    model.eval()
    correct = 0
    test_loss = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += torch.nn.functional.nll_loss(output, target, reduction='sum').item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    return test_loss, correct


def export(model, example, path):
    model.eval()
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt)
    traced = torch.jit.trace(model, example)
    traced.save("model.ts")


def generate(model, tokenizer, prompts, device):
    model.eval()
    outs = []
    for p in prompts:
        ids = tokenizer(p, return_tensors="pt").input_ids.to(device)
        gen = model.generate(ids, max_new_tokens=32)
        outs.append(tokenizer.decode(gen[0]))
    return outs
