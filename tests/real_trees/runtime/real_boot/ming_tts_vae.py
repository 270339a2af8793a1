"""Ming-TTS's streaming audio VAE (ming_tts_audio_vae.MingAudioVAEModel.chunked_decode_streaming).

Driven as MingAudioVAEModel.forward drives it on the stage-2 streaming path (0.30.0): per request
and engine step, `chunked_decode_streaming(latent_chunk, request_id=..., finished=False)`, whose
returned stream state and past_key_values the model keeps in its per-request dicts
(`_stream_state`, `_past_key_values`) until the request finishes. The cache is built inside the
vendored AudioVAE decoder (common/ming/audio_vae.py) that calls its Qwen2 backbone with
use_cache=True, several frames below the line the finding names.

Shim (documented): the constructor reads only `vllm_config.model_config.hf_config` and
`vllm_config.device_config.device`, so a two-attribute namespace stands for the VllmConfig; the
hf_config is a PretrainedConfig whose `audio_tokenizer_config` is an AudioVAE on tiny 4-layer Qwen2
backbones (its encoder forces 4 layers on its patch aggregator); the sizes MingTTSConfig.validate()
pins (latent 64, patch 4, hop 882, 44.1 kHz) are kept.
"""
from __future__ import annotations

from types import SimpleNamespace

import torch

LATENT = 64
HOP = 882  # the checkpoint's frame hop: MingTTSConfig.validate() pins it, with latent 64, patch 4, 44.1 kHz
PATCH = 4


def _backbone() -> dict:
    return {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4, "num_attention_heads": 2,
            "num_key_value_heads": 1, "max_position_embeddings": 4096, "vocab_size": 8,
            "sliding_window": 4096, "_attn_implementation": "eager"}


def build():
    from transformers import PretrainedConfig

    from vllm_omni.model_executor.models.ming_tts.ming_tts_audio_vae import MingAudioVAEModel

    torch.manual_seed(0)
    hf_config = PretrainedConfig(
        audio_tokenizer_config={
            "sample_rate": 44100, "patch_size": PATCH,
            "enc_kwargs": {"backbone": _backbone(), "input_dim": HOP, "hop_size": HOP, "latent_dim": LATENT},
            "dec_kwargs": {"backbone": _backbone(), "output_dim": HOP, "latent_dim": LATENT},
        },
    )
    vllm_config = SimpleNamespace(model_config=SimpleNamespace(hf_config=hf_config),
                                  device_config=SimpleNamespace(device=torch.device("cpu")))
    return MingAudioVAEModel(vllm_config=vllm_config).eval()


def drive(model, path: str, concurrency: int, steps: int) -> None:
    # on_requests_finished for the previous drive's requests: the model's own eviction
    for rid in list(model._past_key_values):
        model._past_key_values.pop(rid, None)
        model._stream_state.pop(rid, None)
    requests = [f"{path}-{concurrency}-{i}" for i in range(concurrency)]
    with torch.inference_mode():
        for _ in range(steps):
            for rid in requests:
                chunk = torch.randn(2, PATCH, LATENT)  # two latent patches per engine step
                _, stream_state, past, _, _ = model.chunked_decode_streaming(chunk, request_id=rid, finished=False)
                model._stream_state[rid] = stream_state
                model._past_key_values[rid] = past
