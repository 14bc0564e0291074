# WGAN-GP: the gradient penalty needs create_graph, the critic trains
# n_critic times per generator step.
import torch
from torch import autograd


def gradient_penalty(critic, real, fake, device):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=device)
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interpolates = critic(interpolates)
    gradients = autograd.grad(outputs=d_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones_like(d_interpolates),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def train(generator, critic, dataloader, opt_g, opt_c, device, epochs, n_critic=5, latent_dim=100):
    for epoch in range(epochs):
        for i, (imgs, _) in enumerate(dataloader):
            real = imgs.to(device)
            opt_c.zero_grad()
            z = torch.randn(real.size(0), latent_dim, device=device)
            fake = generator(z)
            gp = gradient_penalty(critic, real.data, fake.data, device)
            d_loss = -torch.mean(critic(real)) + torch.mean(critic(fake.detach())) + 10 * gp
            d_loss.backward()
            opt_c.step()
            if i % n_critic == 0:
                opt_g.zero_grad()
                g_loss = -torch.mean(critic(generator(z)))
                g_loss.backward()
                opt_g.step()
                print(f"[{epoch}] [{i}/{len(dataloader)}] D {d_loss.item():.3f} G {g_loss.item():.3f}")
