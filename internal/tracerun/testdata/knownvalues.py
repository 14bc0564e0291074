# Decisions a training step takes from small tensors whose values the meta
# trace knows: an attention mask and labels made on the host and moved to
# the GPU, as a collator's batch is. The mask is all ones (unpadded), so,
# as transformers does (_ignore_causal_mask_sdpa: padding_mask.all()), no
# (B, 1, T, T) mask is made; the last 8 labels of each row are -100, so the
# loss takes B * (T - 8) rows (x[labels != -100]). On meta the values come
# from the host copies (no placeholder False, no all-true mask), so both
# traces allocate the same. In-place writes on the device (add_, copy_)
# keep the values known: a buffer sized from them has B * (T - 8) rows.
# torch.tensor(Python numbers, device=...) is made below the dispatcher:
# its allocation and its values come from the tracer's function mode
# (transformers' vision towers read torch.tensor([m], device=x.device)
# back with .tolist()); a 64 KiB table of them is allocated per step.
import torch
import torch.nn.functional as F

B, T, V, H = 4, 64, 100, 32
torch.manual_seed(0)
emb = torch.nn.Embedding(V, H).cuda()
head = torch.nn.Linear(H, V).cuda()
opt = torch.optim.AdamW(list(emb.parameters()) + list(head.parameters()))
for step in range(3):
    ids = torch.randint(0, V, (B, T))
    attn = torch.ones(B, T, dtype=torch.long)
    labels = ids.clone()
    labels[:, -8:] = -100
    ids, attn, labels = ids.cuda(), attn.cuda(), labels.cuda()
    h = emb(ids)
    if not attn.all():
        bias = torch.zeros(B, 1, T, T, device="cuda").masked_fill(attn[:, None, None, :] == 0, -1e9)
        h = h + bias.mean()
    valid = labels != -100
    loss = F.cross_entropy(head(h[valid]), labels[valid])
    n = int(valid.sum())
    assert n == B * (T - 8), n
    per_row = torch.zeros(B, dtype=torch.long, device="cuda")
    per_row.add_(T - 8)
    rows = torch.empty(B, dtype=torch.long, device="cuda")
    rows.copy_(per_row)
    buf = torch.empty(int(rows.sum()), H, device="cuda")
    assert buf.shape[0] == B * (T - 8), buf.shape
    merge = torch.tensor([2], device=ids.device).expand(B).tolist()
    assert merge == [2] * B, merge
    table = torch.tensor([float(i) for i in range(16384)], device="cuda")
    assert int(table[-1]) == 16383, table[-1]
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
