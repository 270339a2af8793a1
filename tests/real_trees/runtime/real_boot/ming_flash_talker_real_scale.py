"""ming_flash_omni's talker at the released checkpoint's geometry (the reference table's row).

The same drive as ming_flash_talker.py (one request at a time through
MingAudioGenerator.generate_latents, whose _init_kv_cache builds a
StaticCache(max_batch_size=1, max_cache_len=2048) that the prefill writes in full), with:

- bound: `_STATIC_CACHE_LEN = 2048` (talker_module.py, hardcoded), whatever the prompt.
- geometry: not in the vllm-omni source: `_resolve_llm_config` reads the Qwen2Config of the
  checkpoint's talker (`llm_config`), so, as the table says, layers, kv-heads and head_dim are
  only known after load. The table's 24.00 MiB is Qwen2.5-0.5B's geometry, used here:
  num_hidden_layers=24, num_key_value_heads=2, head_dim 64 (hidden_size 896 / 14 heads),
  intermediate_size=4864; vocab_size 32 (tiny: no cache number depends on it).
- dtype: bfloat16 (deploy/ming_flash_omni_tts.yaml sets none; the talker builds its TTS input
  in bfloat16, `build_tts_input(..., dtype=torch.bfloat16)`).
  24 layers x 2 KV heads x 64 x 2,048 positions x 2 (K, V) x 2 B = 25,165,824 B = 24.00 MiB.
- MingFlashOmniTalkerConfig defaults for the AR loop: patch_size=4, history_patch_size=32,
  latent_dim=64, steps=10. The CFM's DiT and the aggregator (checkpoint-only sizes, no cache)
  stay small, as in ming_flash_talker.py.
"""
from __future__ import annotations

import torch

from . import ming_flash_talker
from .ming_flash_talker import drive  # noqa: F401  (the same requests)

QWEN2_5_0_5B = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14,
                "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 32, "max_position_embeddings": 32768}
TALKER_DEFAULTS = dict(steps=10, patch_size=4, history_patch_size=32, latent_dim=64, cfg_strength=2.0)


def build():
    return ming_flash_talker.build(llm_config=QWEN2_5_0_5B, talker=TALKER_DEFAULTS, dtype=torch.bfloat16)
