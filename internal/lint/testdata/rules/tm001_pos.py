import torch
import torch.nn.functional as F


def validate(model, val_loader, device):
    model.eval()
    correct = 0
    for images, target in val_loader:
        images, target = images.to(device), target.to(device)
        output = model(images)  # want: TM001
        correct += output.argmax(1).eq(target).sum().item()
    return correct


class Trainer:
    def evaluate(self):
        total = 0.0
        for batch in self.eval_dataloader:
            out = self.model(**batch)  # want: TM001
            total += out.loss.item()
        return total


def test_loop(model, dataloaders):
    for inputs, labels in dataloaders["val"]:
        logits = model(inputs)  # want: TM001
        print(F.softmax(logits, dim=1).max().item())


def evaluate(model, loader, criterion):
    total = 0.0
    for x, y in loader:
        total += criterion(model(x), y)  # want: TM001 TM002
    return total / len(loader)


def train_and_validate(model, train_loader, val_loader, optimizer, epochs):
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        model.eval()
        correct = 0
        for x, y in val_loader:
            correct += model(x).argmax(1).eq(y).sum().item()  # want: TM001
        print(epoch, correct)


def cifar_test(net, testloader):
    correct = 0
    for data in testloader:
        images, labels = data
        outputs = net(images)  # want: TM001
        correct += (outputs.argmax(1) == labels).sum().item()
    return correct
