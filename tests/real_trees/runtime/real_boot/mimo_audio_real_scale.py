"""MiMo-Audio's local transformer at the released checkpoint's geometry (the reference table's row).

The same drive as mimo_audio.py (`_generate_speech_tokens_and_audio_embeddings` once per engine
step, one row per request in the batch; no capture on a CPU, so the graph pool row is not
exercised), with the numbers of vllm-omni 0.30.0:

- local transformer: every MiMoAudioConfig default (mimo_audio/config_mimo_audio.py):
  local_layers=16, local_attn_heads=64 (local_config() sets kv-heads = heads),
  local_dim=1024 / 64 = head_dim 16, group_size=4, delay_pattern "0-1-2-3-4-5-6-7", so the
  per-call DynamicCache holds group_size + max(delay_pattern) = 11 positions; audio_channels=8,
  speech vocabularies 1025/129 (already small), input_local_layers=6, local_ffn_dim=4096.
- backbone: Qwen2Config's defaults (hidden_size 4096: the width of the hidden state the local path
  reads), its text model replaced by the stand-in as in mimo_audio.py; text vocab_size 64 (tiny:
  no cache number depends on it).
- dtype: bfloat16 (deploy/mimo_audio.yaml `dtype: bfloat16`, as the checkpoint loads).
  16 layers x 64 KV heads x 16 x 11 positions x 2 (K, V) x 2 B = 720,896 B = 704 KiB per row,
  the table's figure.
"""
from __future__ import annotations

from . import mimo_audio
from .mimo_audio import drive  # noqa: F401  (the same engine steps)


def build():
    return mimo_audio.build(config_kwargs={"vocab_size": 64})
