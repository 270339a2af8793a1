"""Qwen3-TTS's codec decoder at the released checkpoint's geometry (the reference table's first row).

The same async-chunk drive as qwen3_tts_decoder.py (Code2Wav's per-request state dicts, ICL
prefix, no CUDA-graph wrapper as under enforce_eager), with the numbers of vllm-omni 0.30.0:

- geometry: every Qwen3TTSTokenizerV2DecoderConfig default (tokenizer_12hz/
  configuration_qwen3_tts_tokenizer_v2.py): num_hidden_layers=8, num_key_value_heads=16,
  hidden_size=1024 / num_attention_heads=16 = head_dim 64, sliding_window=72; the vocoder
  (decoder_dim=1536, upsample_rates (8, 5, 4, 3)) at its defaults too. Random weights.
  codebook_dim has no default (the class reads config.codebook_dim): 512, the released
  tokenizer's; it sets no cache number.
- chunking: deploy/qwen3_tts.yaml's connector (initial_codec_chunk_frames 1, codec_chunk_frames
  25); the ICL reference prefix is one sliding window (72 frames), so after the first step every
  request's retained sliding DynamicCache holds sliding_window - 1 = 71 positions.
- dtype: float32, the table's figure: 8 layers x 16 KV heads x 64 x 71 positions x 2 (K, V) x 4 B
  = 4,653,056 B = 4.44 MiB per row. The source disagrees: deploy/qwen3_tts.yaml gives stage 1
  (Code2Wav) `dtype: bfloat16`, and Code2Wav.load_weights casts the decoder to the model
  config's dtype (`self.decoder.to(device=device, dtype=self.vllm_config.model_config.dtype)`),
  so a deployment from the bundled file holds half that: 2.22 MiB per row
  (KVLINT_QWEN3_TTS_DTYPE=bfloat16 runs it).
"""
from __future__ import annotations

import os

import torch

from .qwen3_tts_decoder import Code2WavDecodePath, drive  # noqa: F401  (drive: the same engine steps)

SLIDING_WINDOW = 72  # Qwen3TTSTokenizerV2DecoderConfig.sliding_window default
CODEC_CHUNK_FRAMES = 25  # deploy/qwen3_tts.yaml, connectors.*.extra.codec_chunk_frames


def build() -> Code2WavDecodePath:
    torch.manual_seed(0)
    dtype = getattr(torch, os.environ.get("KVLINT_QWEN3_TTS_DTYPE", "float32"))
    return Code2WavDecodePath(config_kwargs={"codebook_dim": 512}, prefix=SLIDING_WINDOW, chunk=CODEC_CHUNK_FRAMES, dtype=dtype)
