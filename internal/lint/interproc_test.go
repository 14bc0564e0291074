package lint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Cross-function and cross-module recall: each case is a small project
// (main.py plus the local modules it imports); only main.py is given to
// Lint, so the imported modules are found the way a user's `torchmem lint
// train.py` finds them. "# want: TMxxx" marks the expected findings in
// main.py; a case without markers must be clean.
var interprocCases = []struct {
	name  string
	files map[string]string
}{
	{
		// The AverageMeter of pytorch/examples imagenet/main.py, fed the
		// loss tensor instead of loss.item() (the example itself passes
		// loss.item(): see the negative case below).
		name: "meter_in_module_pos",
		files: map[string]string{
			"utils.py": `
class AverageMeter(object):
    def __init__(self, name, fmt=":f"):
        self.name = name
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count
`,
			"main.py": `
import torch
import torch.nn as nn
from utils import AverageMeter

def train(train_loader, model, criterion, optimizer):
    losses = AverageMeter("Loss", ":.4e")
    model.train()
    for i, (images, target) in enumerate(train_loader):
        output = model(images)
        loss = criterion(output, target)
        losses.update(loss, images.size(0))  # want: TM002
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
`,
		},
	},
	{
		name: "meter_item_neg",
		files: map[string]string{
			"utils.py": `
class AverageMeter(object):
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
`,
			"main.py": `
import torch
from utils import AverageMeter

def train(train_loader, model, criterion, optimizer):
    losses = AverageMeter()
    for images, target in train_loader:
        loss = criterion(model(images), target)
        losses.update(loss.item(), images.size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
`,
		},
	},
	{
		// A meter that converts inside update(): clean whatever is passed.
		name: "meter_converts_neg",
		files: map[string]string{
			"main.py": `
import torch

class Meter:
    def __init__(self):
        self.total = 0.0

    def update(self, val):
        self.total += float(val)

def train(loader, model, criterion, optimizer):
    meter = Meter()
    for x, y in loader:
        loss = criterion(model(x), y)
        meter.update(loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
`,
		},
	},
	{
		name: "helper_appends_pos",
		files: map[string]string{
			"main.py": `
import torch

def record(history, value):
    history.append(value)

def train(loader, model, criterion, optimizer):
    history = []
    for x, y in loader:
        loss = criterion(model(x), y)
        record(history, loss)  # want: TM002
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return history
`,
		},
	},
	{
		name: "helper_appends_detached_neg",
		files: map[string]string{
			"main.py": `
import torch

def record(history, value):
    history.append(value.detach())

def train(loader, model, criterion, optimizer):
    history = []
    for x, y in loader:
        loss = criterion(model(x), y)
        record(history, loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
`,
		},
	},
	{
		// A helper that returns the loss: the caller sums what it returns.
		name: "helper_returns_loss_pos",
		files: map[string]string{
			"steps.py": `
import torch.nn.functional as F

def forward_loss(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y)
`,
			"main.py": `
import torch
from steps import forward_loss

def train(loader, model, optimizer):
    running = 0
    for batch in loader:
        loss = forward_loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += forward_loss(model, batch)  # want: TM002
`,
		},
	},
	{
		name: "helper_returns_item_neg",
		files: map[string]string{
			"main.py": `
import torch
import torch.nn.functional as F

def step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()

def train(loader, model, optimizer):
    total = 0
    for x, y in loader:
        total += step(model, optimizer, x, y)
        optimizer.zero_grad()
`,
		},
	},
	{
		// The Lightning 2.x docs' on_train_epoch_end example, which keeps
		// every step's loss with its graph until the epoch ends.
		name: "lightning_step_outputs_pos",
		files: map[string]string{
			"main.py": `
import torch
import torch.nn.functional as F
import lightning as L

class LitModel(L.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.training_step_outputs = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.training_step_outputs.append(loss)  # want: TM002
        return loss

    def on_train_epoch_end(self):
        epoch_mean = torch.stack(self.training_step_outputs).mean()
        self.log("training_epoch_mean", epoch_mean)
        self.training_step_outputs.clear()
`,
		},
	},
	{
		// Returned loss computed by a helper; appended detached: clean.
		name: "lightning_step_outputs_detached_neg",
		files: map[string]string{
			"main.py": `
import torch
import lightning as L

class LitModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.training_step_outputs = []
        self.validation_step_outputs = []

    def training_step(self, batch, batch_idx):
        loss = self.compute_loss(batch)
        self.training_step_outputs.append(loss.detach())
        self.log("train_loss", loss)
        return {"loss": loss}

    def validation_step(self, batch, batch_idx):
        loss = self.compute_loss(batch)
        self.validation_step_outputs.append(loss)
        return loss
`,
		},
	},
	{
		name: "lightning_dict_return_pos",
		files: map[string]string{
			"main.py": `
import pytorch_lightning as pl

class LitModel(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self.compute_loss(batch)
        self.losses.append(loss)  # want: TM002
        return {"loss": loss}
`,
		},
	},
	{
		// pytorch/pytorch#4377: a TensorDataset of CUDA tensors read by
		// two workers fails with "CUDA error (3): initialization error".
		name: "tensordataset_cuda_workers_pos",
		files: map[string]string{
			"main.py": `
import torch
from torch.utils.data import DataLoader, TensorDataset

features = torch.randn(12, 4)
features = features.cuda()
labels = torch.arange(12, device="cuda")
dataset = TensorDataset(features, labels)
loader = DataLoader(dataset, batch_size=4, num_workers=2)  # want: TM007
`,
		},
	},
	{
		name: "tensordataset_cuda_no_workers_neg",
		files: map[string]string{
			"main.py": `
import torch
from torch.utils.data import DataLoader, TensorDataset

features = torch.randn(12, 4).cuda()
labels = torch.arange(12)
dataset = TensorDataset(features, labels)
loader = DataLoader(dataset, batch_size=4)
cpu_ds = TensorDataset(torch.randn(12, 4), labels)
cpu_loader = DataLoader(cpu_ds, batch_size=4, num_workers=4)
`,
		},
	},
	{
		// The DummyDataset of a pytorch/pytorch#1494 comment: the tensor
		// created on the GPU in __init__, read in workers through a
		// DataLoader subclass whose __init__ fixes num_workers.
		name: "gpu_init_dataset_subclass_loader_pos",
		files: map[string]string{
			"main.py": `
import torch
from torch.utils import data

class DummyDataset(data.Dataset):
    def __init__(self, num_classes):
        super(DummyDataset, self).__init__()
        self.tensor = torch.randn(3, 224, 224, device=torch.device("cuda"))  # want: TM007
        self.num_classes = num_classes

    def __len__(self):
        return 1000

    def __getitem__(self, idx):
        return self.tensor, idx % self.num_classes

class FastLoader(data.DataLoader):
    def __init__(self, dataset, **kwargs):
        super().__init__(dataset, num_workers=8, pin_memory=True, **kwargs)

loader = FastLoader(DummyDataset(10), batch_size=32)
`,
		},
	},
	{
		// Same dataset, kept on the GPU on purpose and read in the main
		// process: fine.
		name: "gpu_init_dataset_no_workers_neg",
		files: map[string]string{
			"main.py": `
import torch
from torch.utils.data import Dataset, DataLoader

class OnDevice(Dataset):
    def __init__(self, x):
        self.x = x.cuda()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i]

loader = DataLoader(OnDevice(torch.randn(100, 3)), batch_size=10, num_workers=0)
`,
		},
	},
	{
		// pytorch/examples mnist/main.py passes num_workers in a dict that
		// is merged with update(); the dataset here does CUDA work per item.
		name: "kwargs_dict_update_pos",
		files: map[string]string{
			"main.py": `
import torch
from torch.utils.data import Dataset, DataLoader

class Digits(Dataset):
    def __init__(self, images):
        self.images = images

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i].cuda()  # want: TM007

def main(use_cuda):
    train_kwargs = {"batch_size": 64}
    if use_cuda:
        cuda_kwargs = {"num_workers": 1, "pin_memory": True, "shuffle": True}
        train_kwargs.update(cuda_kwargs)
    dataset1 = Digits(torch.randn(10, 1, 28, 28))
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
`,
		},
	},
	{
		// A loader wrapper: num_workers through **kwargs, the dataset a
		// parameter; both resolved at the wrapper's call site.
		name: "wrapper_kwargs_pos",
		files: map[string]string{
			"data.py": `
from torch.utils.data import DataLoader

def make_loader(dataset, **kwargs):
    return DataLoader(dataset, shuffle=True, **kwargs)
`,
			"main.py": `
import torch
from torch.utils.data import Dataset
from data import make_loader

class Features(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.zeros(8, device="cuda")  # want: TM007

train_loader = make_loader(Features(100), batch_size=8, num_workers=4)
`,
		},
	},
	{
		name: "wrapper_kwargs_zero_neg",
		files: map[string]string{
			"main.py": `
import torch
from torch.utils.data import Dataset, DataLoader

class Features(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return torch.zeros(8, device="cuda")

def make_loader(dataset, **kwargs):
    return DataLoader(dataset, **kwargs)

loader = make_loader(Features(), batch_size=8, num_workers=0)
other = DataLoader(Features(), **{"num_workers": 0})
`,
		},
	},
}

func TestInterprocCases(t *testing.T) {
	py := testPython(t)
	for _, c := range interprocCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, src := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.TrimLeft(src, "\n")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			main := filepath.Join(dir, "main.py")
			res, err := Lint(context.Background(), []string{main}, Options{Python: py})
			if err != nil {
				t.Fatal(err)
			}
			want, have := wants(t, main), got(res.Findings)
			if strings.Join(want, " ") != strings.Join(have, " ") {
				t.Errorf("want %v\ngot  %v", want, have)
				for _, f := range res.Findings {
					t.Logf("  %s:%d:%d: %s %s", filepath.Base(f.File), f.Line, f.Col, f.Rule, f.Message)
				}
			}
		})
	}
}
