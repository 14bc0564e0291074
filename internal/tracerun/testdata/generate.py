# Greedy generation as transformers' generate() loop runs it (no model
# code of theirs): a small decoder with a growing key/value cache, the next
# token by argmax, and the stopping criteria combined as transformers does:
# is_done = full(False) | full(length >= max_length) | isin(last, eos);
# unfinished = unfinished & ~is_done; stop when unfinished.max() == 0. The
# generated tokens have no values on meta, so the end-of-sequence test is
# unknown; the known max-length test decides both combinations (x | True,
# x & 0) and the loop ends at max_length, as a GPU run that never meets
# the end token does (eos -1 is never generated, on real tensors either).
# Args: batch prompt max_new_tokens
import sys

import torch

B, P, N = (int(x) for x in sys.argv[1:4])
V, H = 100, 32
torch.manual_seed(0)
emb = torch.nn.Embedding(V, H).cuda()
qkv = torch.nn.Linear(H, 3 * H).cuda()
head = torch.nn.Linear(H, V).cuda()
eos = torch.tensor([-1]).cuda()
ids = torch.randint(0, V, (B, P)).cuda()
unfinished = torch.ones(B, dtype=torch.long, device=ids.device)
k_cache = v_cache = None
steps = 0
with torch.no_grad():
    x = ids
    while True:
        q, k, v = qkv(emb(x)).chunk(3, dim=-1)
        k_cache = k if k_cache is None else torch.cat([k_cache, k], dim=1)
        v_cache = v if v_cache is None else torch.cat([v_cache, v], dim=1)
        att = torch.softmax(q[:, -1:] @ k_cache.transpose(1, 2) / H ** 0.5, dim=-1) @ v_cache
        nxt = head(att[:, -1]).argmax(-1)
        nxt = nxt * unfinished + 0 * (1 - unfinished)
        ids = torch.cat([ids, nxt[:, None]], dim=-1)
        is_done = torch.full((B,), False, device=ids.device, dtype=torch.bool)
        is_done = is_done | torch.full((B,), ids.shape[1] >= P + N, device=ids.device, dtype=torch.bool)
        is_done = is_done | torch.isin(ids[:, -1:], eos).any(dim=-1)
        unfinished = unfinished & ~is_done
        steps += 1
        if unfinished.max() == 0:
            break
        x = nxt[:, None]
assert ids.shape == (B, P + N) and steps == N, (ids.shape, steps)
