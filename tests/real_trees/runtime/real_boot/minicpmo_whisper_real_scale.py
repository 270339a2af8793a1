"""MiniCPM-o 4.5's streaming Whisper encoder at the released checkpoint's geometry (the table's row).

The same drive as minicpmo_whisper.py (the duplex stage-0 runtime's sessions, one
EncoderDecoderCache per session built in MiniCPMWhisperEncoder.forward), with these numbers:

- bound: max_source_positions=1500 (WhisperConfig's default, which MiniCPMO45Config keeps; the
  declaration reads it off embed_positions). get_audio_embedding_streaming resets a session's
  cache when `cache_length + current_seq_len >= 1500`, so a session holds at most 1,499 positions.
- geometry: not in the vllm-omni source. MiniCPMO45Config builds `WhisperConfig(**audio_config)`
  from the checkpoint (`WhisperConfig()` when it has none, whisper-tiny-sized: 4 layers of 384,
  which the table does not describe); the released checkpoint's audio_config is whisper-medium:
  encoder_layers=24, d_model=1024, encoder_attention_heads=16, encoder_ffn_dim=4096,
  num_mel_bins=80. Random weights.
- dtype: bfloat16 (deploy/minicpmo_4_5.yaml sets none: the checkpoint's torch_dtype).
  24 layers x 16 heads x 64 x 2 (K, V) x 2 B = 96 KiB per position: 1,500 positions (the
  declared capacity) = 140.62 MiB, the table's figure; the 1,499 a session can hold = 140.53 MiB.
- chunks: a first chunk of 2,901 mel frames (1,450 encoder positions once the suffix frame is
  cropped, about 29 s of audio) and then 99-frame chunks (49 positions, about 1 s): after two
  steps every session holds 1,499 positions, and a third chunk would reset it (1,499 + 49 >= 1,500).
"""
from __future__ import annotations

import torch

from .minicpmo_whisper import DuplexStage, drive  # noqa: F401  (drive: the same sessions)

WHISPER_MEDIUM = dict(num_mel_bins=80, d_model=1024, encoder_layers=24, encoder_attention_heads=16,
                      encoder_ffn_dim=4096, max_source_positions=1500,
                      decoder_layers=1, decoder_attention_heads=16, decoder_ffn_dim=64)  # decoder unused
CHUNK_MEL_FRAMES = [2901, 99]


def build() -> DuplexStage:
    torch.manual_seed(0)
    return DuplexStage(audio_kwargs=WHISPER_MEDIUM, dtype=torch.bfloat16, chunk_mel_frames=CHUNK_MEL_FRAMES)
