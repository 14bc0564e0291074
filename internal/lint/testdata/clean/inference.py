# Batch inference: model.eval() + inference_mode, results moved to the CPU.
import argparse

import torch
import torchvision
from torch.utils.data import DataLoader


def load_model(path, device):
    model = torchvision.models.resnet50()
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state)
    return model.to(device).eval()


@torch.inference_mode()
def predict(model, loader, device):
    probs = []
    for images, _ in loader:
        logits = model(images.to(device, non_blocking=True))
        probs.append(logits.softmax(dim=-1).cpu())
    return torch.cat(probs)


def embed(model, test_loader, device):
    model.eval()
    features = []
    with torch.no_grad():
        for batch in test_loader:
            out = model(batch.to(device))
            features.append(out.detach().cpu())
    return torch.cat(features)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights")
    parser.add_argument("--data")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = load_model(args.weights, device)
    dataset = torchvision.datasets.ImageFolder(args.data, transform=torchvision.transforms.ToTensor())
    loader = DataLoader(dataset, batch_size=128, num_workers=8, pin_memory=True)
    probs = predict(model, loader, device)
    print(probs.argmax(dim=1).tolist()[:10])


if __name__ == "__main__":
    main()
