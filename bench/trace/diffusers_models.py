"""Stable Diffusion 1.5, SDXL base 1.0 and Flux.1-dev model folders for
diffusers' from_pretrained, made locally: the published configs (numbers copied from
the Hugging Face repositories' config.json files), a sparse safetensors
checkpoint per component (a valid header, no data on disk; the trace never
reads it) and a stand-in CLIP tokenizer (byte-level, no merges: prompts
tokenize differently, the 77-token padding the models see is the same).

usage: python3 diffusers_models.py WORKDIR   (needs diffusers, transformers, tokenizers)
"""
import json
import os
import sys

import torch

SD15 = {
    "model_index.json": {"_class_name": "StableDiffusionPipeline", "scheduler": ["diffusers", "PNDMScheduler"],
                         "text_encoder": ["transformers", "CLIPTextModel"], "tokenizer": ["transformers", "CLIPTokenizer"],
                         "unet": ["diffusers", "UNet2DConditionModel"], "vae": ["diffusers", "AutoencoderKL"]},
    "unet": {"_class_name": "UNet2DConditionModel", "act_fn": "silu", "attention_head_dim": 8,
             "block_out_channels": [320, 640, 1280, 1280], "cross_attention_dim": 768,
             "down_block_types": ["CrossAttnDownBlock2D"] * 3 + ["DownBlock2D"], "downsample_padding": 1,
             "flip_sin_to_cos": True, "freq_shift": 0, "in_channels": 4, "layers_per_block": 2, "norm_eps": 1e-05,
             "norm_num_groups": 32, "out_channels": 4, "sample_size": 64,
             "up_block_types": ["UpBlock2D"] + ["CrossAttnUpBlock2D"] * 3},
    "vae": {"_class_name": "AutoencoderKL", "act_fn": "silu", "block_out_channels": [128, 256, 512, 512],
            "down_block_types": ["DownEncoderBlock2D"] * 4, "in_channels": 3, "latent_channels": 4, "layers_per_block": 2,
            "norm_num_groups": 32, "out_channels": 3, "sample_size": 512, "up_block_types": ["UpDecoderBlock2D"] * 4},
    "text_encoder": {"architectures": ["CLIPTextModel"], "model_type": "clip_text_model", "hidden_act": "quick_gelu",
                     "hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12, "num_hidden_layers": 12,
                     "max_position_embeddings": 77, "projection_dim": 768, "vocab_size": 49408,
                     "bos_token_id": 0, "eos_token_id": 2, "pad_token_id": 1},
    "scheduler": {"_class_name": "PNDMScheduler", "beta_end": 0.012, "beta_schedule": "scaled_linear",
                  "beta_start": 0.00085, "num_train_timesteps": 1000, "set_alpha_to_one": False, "skip_prk_steps": True,
                  "steps_offset": 1, "clip_sample": False},
    "tokenizer": None,
}

SDXL = {
    "model_index.json": {"_class_name": "StableDiffusionXLPipeline", "scheduler": ["diffusers", "EulerDiscreteScheduler"],
                         "text_encoder": ["transformers", "CLIPTextModel"],
                         "text_encoder_2": ["transformers", "CLIPTextModelWithProjection"],
                         "tokenizer": ["transformers", "CLIPTokenizer"], "tokenizer_2": ["transformers", "CLIPTokenizer"],
                         "unet": ["diffusers", "UNet2DConditionModel"], "vae": ["diffusers", "AutoencoderKL"]},
    "unet": {"_class_name": "UNet2DConditionModel", "act_fn": "silu", "addition_embed_type": "text_time",
             "addition_embed_type_num_heads": 64, "addition_time_embed_dim": 256, "attention_head_dim": [5, 10, 20],
             "block_out_channels": [320, 640, 1280], "cross_attention_dim": 2048,
             "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
             "downsample_padding": 1, "flip_sin_to_cos": True, "freq_shift": 0, "in_channels": 4, "layers_per_block": 2,
             "mid_block_type": "UNetMidBlock2DCrossAttn", "norm_eps": 1e-05, "norm_num_groups": 32, "out_channels": 4,
             "projection_class_embeddings_input_dim": 2816, "sample_size": 128, "transformer_layers_per_block": [1, 2, 10],
             "up_block_types": ["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"], "use_linear_projection": True},
    "vae": dict(SD15["vae"], sample_size=1024, scaling_factor=0.13025, force_upcast=True),
    "text_encoder": SD15["text_encoder"],
    "text_encoder_2": {"architectures": ["CLIPTextModelWithProjection"], "model_type": "clip_text_model",
                       "hidden_act": "gelu", "hidden_size": 1280, "intermediate_size": 5120, "num_attention_heads": 20,
                       "num_hidden_layers": 32, "max_position_embeddings": 77, "projection_dim": 1280,
                       "vocab_size": 49408, "bos_token_id": 0, "eos_token_id": 2,
                       "pad_token_id": 1},
    "scheduler": {"_class_name": "EulerDiscreteScheduler", "beta_end": 0.012, "beta_schedule": "scaled_linear",
                  "beta_start": 0.00085, "num_train_timesteps": 1000, "prediction_type": "epsilon",
                  "steps_offset": 1, "timestep_spacing": "leading", "interpolation_type": "linear"},
    "tokenizer": None,
    "tokenizer_2": None,
}

FLUX = {
    "model_index.json": {"_class_name": "FluxPipeline", "scheduler": ["diffusers", "FlowMatchEulerDiscreteScheduler"],
                         "text_encoder": ["transformers", "CLIPTextModel"], "text_encoder_2": ["transformers", "T5EncoderModel"],
                         "tokenizer": ["transformers", "CLIPTokenizer"], "tokenizer_2": ["transformers", "T5TokenizerFast"],
                         "transformer": ["diffusers", "FluxTransformer2DModel"], "vae": ["diffusers", "AutoencoderKL"]},
    "transformer": {"_class_name": "FluxTransformer2DModel", "attention_head_dim": 128, "guidance_embeds": True,
                    "in_channels": 64, "joint_attention_dim": 4096, "num_attention_heads": 24, "num_layers": 19,
                    "num_single_layers": 38, "patch_size": 1, "pooled_projection_dim": 768, "axes_dims_rope": [16, 56, 56]},
    "vae": dict(SD15["vae"], latent_channels=16, sample_size=1024, scaling_factor=0.3611, shift_factor=0.1159,
                mid_block_add_attention=True, use_quant_conv=False, use_post_quant_conv=False, force_upcast=True),
    "text_encoder": SD15["text_encoder"],
    "text_encoder_2": {"architectures": ["T5EncoderModel"], "d_ff": 10240, "d_kv": 64, "d_model": 4096,
                       "dense_act_fn": "gelu_new", "feed_forward_proj": "gated-gelu", "is_gated_act": True,
                       "layer_norm_epsilon": 1e-06, "model_type": "t5", "num_heads": 64, "num_layers": 24,
                       "relative_attention_max_distance": 128, "relative_attention_num_buckets": 32,
                       "tie_word_embeddings": False, "vocab_size": 32128},
    "scheduler": {"_class_name": "FlowMatchEulerDiscreteScheduler", "base_image_seq_len": 256, "base_shift": 0.5,
                  "max_image_seq_len": 4096, "max_shift": 1.15, "num_train_timesteps": 1000, "shift": 3.0,
                  "use_dynamic_shifting": True},
    "tokenizer": None,
    # transformers' T5 tokenizer makes a minimal vocabulary of its own
    # without a vocabulary file; prompts are padded to 512 tokens all the same
    "tokenizer_2": {"model_max_length": 512, "tokenizer_class": "T5Tokenizer", "eos_token": "</s>",
                    "unk_token": "<unk>", "pad_token": "<pad>", "extra_ids": 100},
}

DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}


def sparse_safetensors(path, state):
    hdr, off = {}, 0
    for k, v in state.items():
        n = v.numel() * v.element_size()
        hdr[k] = {"dtype": DTYPES[v.dtype], "shape": list(v.shape), "data_offsets": [off, off + n]}
        off += n
    hdr["__metadata__"] = {"format": "pt"}
    h = json.dumps(hdr).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        f.truncate(8 + len(h) + off)


def component(d, cfg):
    import diffusers
    import transformers
    os.makedirs(d, exist_ok=True)
    if "_class_name" in cfg:
        json.dump(cfg, open(os.path.join(d, "scheduler_config.json" if "Scheduler" in cfg["_class_name"] else "config.json"), "w"))
        if "Scheduler" in cfg["_class_name"]:
            return
        cls = getattr(diffusers, cfg["_class_name"])
        with torch.device("meta"):
            model = cls.from_config(cls.load_config(d))
        sparse_safetensors(os.path.join(d, "diffusion_pytorch_model.safetensors"), model.state_dict())
        return
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    c = transformers.AutoConfig.from_pretrained(d)
    with torch.device("meta"):
        model = getattr(transformers, cfg["architectures"][0])(c)
    # float32, as the repositories' default files (not their fp16 variants)
    sparse_safetensors(os.path.join(d, "model.safetensors"), model.float().state_dict())


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def tokenizer(d):
    """A fast tokenizer file: Debian sid's tokenizers 0.23 refuses
    transformers 5.12's CLIPTokenizer (RobertaProcessing(cls=...))."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    os.makedirs(d, exist_ok=True)
    chars = bytes_to_unicode()
    vocab = {c: i for i, c in enumerate(chars)}
    for c in chars:
        vocab[c + "</w>"] = len(vocab)
    for s in ("<|startoftext|>", "<|endoftext|>"):
        vocab[s] = len(vocab)
    t = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<|endoftext|>", end_of_word_suffix="</w>"))
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.decoder = decoders.ByteLevel()
    t.post_processor = processors.TemplateProcessing(
        single="<|startoftext|> $A <|endoftext|>",
        special_tokens=[("<|startoftext|>", vocab["<|startoftext|>"]), ("<|endoftext|>", vocab["<|endoftext|>"])])
    t.save(os.path.join(d, "tokenizer.json"))
    json.dump({"model_max_length": 77, "bos_token": "<|startoftext|>", "eos_token": "<|endoftext|>",
               "unk_token": "<|endoftext|>", "pad_token": "<|endoftext|>", "tokenizer_class": "PreTrainedTokenizerFast"},
              open(os.path.join(d, "tokenizer_config.json"), "w"))


def main():
    work = sys.argv[1]
    for name, spec in (("sd15", SD15), ("sdxl", SDXL), ("flux", FLUX)):
        root = os.path.join(work, name)
        if os.path.exists(os.path.join(root, "model_index.json")):
            continue
        for sub, cfg in spec.items():
            if sub == "model_index.json":
                continue
            if cfg is None:
                tokenizer(os.path.join(root, sub))
            elif sub.startswith("tokenizer"):
                os.makedirs(os.path.join(root, sub), exist_ok=True)
                json.dump(cfg, open(os.path.join(root, sub, "tokenizer_config.json"), "w"))
            else:
                component(os.path.join(root, sub), cfg)
        json.dump(spec["model_index.json"], open(os.path.join(root, "model_index.json"), "w"))
        print(root)


if __name__ == "__main__":
    main()
