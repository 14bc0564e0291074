# A vision-language fine-tuning step on transformers' own Qwen2.5-VL code
# (transformers >= 4.49), small config made here: one image of 16 x 16
# patches per sample, its merged patches' image tokens in the prompt, labels
# masked over the prompt, AdamW. The inputs are what the processor would
# give (pixel_values as flattened patches, image_grid_thw), built by hand.
# Args: batch seq precision(amp|fp32) attention(sdpa|eager)
import sys

import torch
from transformers import AutoModelForImageTextToText, Qwen2_5_VLConfig

B, S = int(sys.argv[1]), int(sys.argv[2])
amp = sys.argv[3] == "amp"
cfg = Qwen2_5_VLConfig(
    text_config=dict(vocab_size=2000, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2,
                     rope_parameters=dict(rope_type="default", rope_theta=1e6, mrope_section=[8, 12, 12])),
    vision_config=dict(depth=2, hidden_size=128, intermediate_size=256, num_heads=4, out_hidden_size=256,
                       fullatt_block_indexes=[1], window_size=112),
    image_token_id=1500, video_token_id=1501, vision_start_token_id=1502, bos_token_id=1, eos_token_id=2)
model = AutoModelForImageTextToText.from_config(cfg, attn_implementation=sys.argv[4]).cuda()
model.config.use_cache = False
opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
v = cfg.vision_config
gh = gw = 16
n_img = gh * gw // (v.spatial_merge_size ** 2)
for step in range(3):
    grid = torch.tensor([[1, gh, gw]] * B)
    pixels = torch.randn(B * gh * gw, 3 * v.temporal_patch_size * v.patch_size ** 2)
    ids = torch.randint(10, 1000, (B, S))
    ids[:, 1:1 + n_img] = cfg.image_token_id
    labels = ids.clone()
    labels[:, :1 + n_img] = -100
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        out = model(input_ids=ids.cuda(), attention_mask=torch.ones_like(ids).cuda(), pixel_values=pixels.cuda(),
                    image_grid_thw=grid.cuda(), labels=labels.cuda())
    out.loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
