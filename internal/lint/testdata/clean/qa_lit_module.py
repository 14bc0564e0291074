import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, random_split
import lightning as L
from torchvision.datasets import MNIST
from torchvision import transforms


class LitAutoEncoder(L.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = nn.Sequential(nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 28 * 28))
        self.validation_step_outputs = []

    def forward(self, x):
        return self.encoder(x)

    def training_step(self, batch, batch_idx):
        x, _ = batch
        x = x.view(x.size(0), -1)
        z = self.encoder(x)
        x_hat = self.decoder(z)
        loss = F.mse_loss(x_hat, x)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, _ = batch
        x = x.view(x.size(0), -1)
        z = self.encoder(x)
        x_hat = self.decoder(z)
        loss = F.mse_loss(x_hat, x)
        self.validation_step_outputs.append(loss)
        self.log("val_loss", loss, prog_bar=True)

    def on_validation_epoch_end(self):
        epoch_average = torch.stack(self.validation_step_outputs).mean()
        self.log("validation_epoch_average", epoch_average)
        self.validation_step_outputs.clear()

    def test_step(self, batch, batch_idx):
        x, _ = batch
        x = x.view(x.size(0), -1)
        loss = F.mse_loss(self.decoder(self.encoder(x)), x)
        self.log("test_loss", loss)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


if __name__ == "__main__":
    dataset = MNIST(".", download=True, transform=transforms.ToTensor())
    train, val = random_split(dataset, [55000, 5000])
    autoencoder = LitAutoEncoder()
    trainer = L.Trainer(max_epochs=2, precision="bf16-mixed", accumulate_grad_batches=4)
    trainer.fit(autoencoder, DataLoader(train, batch_size=64, num_workers=4), DataLoader(val, batch_size=64, num_workers=4))
    trainer.test(autoencoder, DataLoader(val, batch_size=64))
