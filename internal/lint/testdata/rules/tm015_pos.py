import torch
import torchvision

features = []


def save_output(module, inp, output):
    features.append(output)  # want: TM015


class GradCam:
    def __init__(self, model, layer):
        self.model = model
        self.target_grad = None
        layer.register_full_backward_hook(self.save_grad)

    def save_grad(self, module, grad_input, grad_output):
        self.target_grad = grad_output[0]  # want: TM015


model = torchvision.models.resnet18()
model.layer4.register_forward_hook(save_output)
acts = []
model.fc.register_forward_hook(lambda m, i, o: acts.append(o.flatten(1)))  # want: TM015
