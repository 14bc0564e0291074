import torch
import torchvision

activation = {}


def get_activation(name):
    def hook(model, input, output):
        activation[name] = output.detach()
    return hook


features = []


def save_output(module, inp, output):
    features.append(output.detach().cpu())


per_batch = []


def keep(module, inp, output):
    per_batch.append(output)


class GradCam:
    def __init__(self, layer):
        layer.register_full_backward_hook(self.save_grad)

    def save_grad(self, module, grad_input, grad_output):
        self.target_grad = grad_output[0].detach()


model = torchvision.models.resnet18()
model.fc.register_forward_hook(get_activation("fc"))
model.layer4.register_forward_hook(save_output)
model.layer3.register_forward_hook(keep)
for x in torch.randn(4, 2, 3, 32, 32):
    model(x)
    per_batch.clear()
