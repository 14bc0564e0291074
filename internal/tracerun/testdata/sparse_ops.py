"""Ops on a sparse embedding gradient (torchmem's own test script): each
prints what it made (sparse: nnz, the values' shape, dtype, coalesced).
On meta the tracer must answer as a GPU does: as the CPU does, but for
sparse + sparse, which CUDA concatenates (nnz adds up) where the CPU
kernel merges."""
import torch
dev = "cuda" if torch.cuda.is_available() else "cpu"
w = torch.nn.Parameter(torch.zeros(1000, 16, device=dev))
emb = torch.nn.functional.embedding
idx = torch.arange(100, device=dev) % 37
out = emb(idx, w, sparse=True).sum()
out.backward()
s = w.grad
def show(name, x):
    if x.is_sparse:
        print(name, "sparse", x._nnz(), tuple(x._values().shape), x.dtype, x.is_coalesced())
    else:
        print(name, "dense", tuple(x.shape), x.dtype)
show("grad", s)
show("mul", s * 2)
show("div", s / 2)
show("neg", -s)
show("clone", s.clone())
show("double", s.to(torch.float64))
c = s.coalesce(); show("coalesce", c)
show("to_dense", s.to_dense())
print("norm", tuple(s.norm().shape))
d = torch.ones(1000, 16, device=dev)
show("sparse_mask", d.sparse_mask(c))
show("sub", s - s)
show("d+s", d + s)
show("d-s", d - s)
s2 = s.clone(); s2.add_(s); show("add_", s2); show("add_ detach", s2.detach()); print("values", tuple(s2._values().shape), tuple(s2._indices().shape))
s2.zero_(); show("zero_", s2)
s2.add_(s); show("add_ after zero", s2)
s3 = s.clone(); s3.copy_(s2); show("copy_", s3)
