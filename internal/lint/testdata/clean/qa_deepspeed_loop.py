import argparse
import deepspeed
import torch
from torch.utils.data import DataLoader


def main():
    parser = argparse.ArgumentParser()
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    model = torch.nn.Linear(10, 10)
    model_engine, optimizer, trainloader, _ = deepspeed.initialize(
        args=args, model=model, model_parameters=model.parameters(), training_data=None)
    for epoch in range(2):
        for step, (x, y) in enumerate(trainloader):
            x = x.to(model_engine.local_rank)
            loss = torch.nn.functional.mse_loss(model_engine(x), y.to(x.device))
            model_engine.backward(loss)
            model_engine.step()
            if step % 100 == 0:
                print(loss.item())
    model_engine.save_checkpoint("ckpt")


def scheduler_only(model, loader, opt, sched):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        sched.step()


def lbfgs_train(model, x, y, steps=20):
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.8)
    for i in range(steps):
        def closure():
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss
        optimizer.step(closure)


def zero_via_model(model, loader, opt):
    for x, y in loader:
        model.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()


class HFTrainerLike:
    def training_step(self, model, inputs):
        model.train()
        loss = self.compute_loss(model, inputs)
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        self.accelerator.backward(loss)
        return loss.detach()

    def inner_loop(self, model, dataloader):
        tr_loss = torch.tensor(0.0, device=self.args.device)
        for step, inputs in enumerate(dataloader):
            tr_loss_step = self.training_step(model, inputs)
            tr_loss = tr_loss + tr_loss_step
            if (step + 1) % self.args.gradient_accumulation_steps == 0:
                self.optimizer.step()
                self.lr_scheduler.step()
                model.zero_grad()
