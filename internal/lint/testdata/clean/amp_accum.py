# A plain loop with AMP (torch.amp), gradient accumulation and periodic
# validation; the loss is divided before backward and the step is gated.
import torch
import torch.nn.functional as F


def evaluate(model, val_loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for x, y in val_loader:
            x, y = x.to(device), y.to(device)
            pred = model(x).argmax(dim=1)
            correct += (pred == y).sum().item()
            total += y.numel()
    model.train()
    return correct / max(total, 1)


def fit(model, train_loader, val_loader, optimizer, scheduler, device, accum_steps=4, epochs=10):
    scaler = torch.amp.GradScaler("cuda")
    model.train()
    for epoch in range(epochs):
        losses = []
        for i, (x, y) in enumerate(train_loader):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = model(x)
                loss = F.cross_entropy(logits, y) / accum_steps
            scaler.scale(loss).backward()
            losses.append(loss.item() * accum_steps)
            if (i + 1) % accum_steps == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()
        acc = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: loss {sum(losses) / len(losses):.4f} val acc {acc:.3f}")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scaler": scaler.state_dict(), "epoch": epoch}, "last.pt")


def resume(model, optimizer, path):
    ckpt = torch.load(path, map_location="cpu")
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"] + 1
