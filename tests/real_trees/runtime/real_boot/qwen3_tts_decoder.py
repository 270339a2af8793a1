"""Qwen3-TTS's codec decoder (tokenizer_12hz Qwen3TTSTokenizerV2Decoder) on its async-chunk path.

Driven as Qwen3TTSCode2Wav.forward drives it under async_chunk (0.30.0): one state dict per
request in the Code2Wav's `_decoder_state_cache` (here `sessions`), evicted when the request
finishes (`on_requests_finished`); each engine step hands every request's new codec frames to
`decoder.batched_chunked_decode(codes, lengths, caches=request_states, ...)`. The first chunk
carries the ICL reference prefix (`prefix_frames`). The decoder keeps a retained sliding
DynamicCache per request and deep-copies it into a working copy every chunk.

The CUDA-graph wrapper is absent, as under `enforce_eager` (Qwen3TTSCode2Wav.
_maybe_enable_decoder_cudagraph returns before building it) and on any CPU: the path that
allocates per-request KV runs, while `model_local_kv_specs()` declares per-request specs only
when `_cudagraph_wrapper` exists (Deliver 4 of issue 19). The decoder module needs only
vllm.logger; the config is tiny and random (2 layers, 2 KV heads of 32, sliding window 8).
"""
from __future__ import annotations

import torch

from . import sessions

PREFIX = 8  # ICL reference frames = the sliding window (the grouped icl_prefix phase)
CHUNK = 4  # new codec frames per engine step after the first


TINY = dict(
    codebook_size=64, hidden_size=64, latent_dim=64, num_attention_heads=2, num_key_value_heads=2,
    head_dim=32, sliding_window=PREFIX, intermediate_size=128, num_hidden_layers=2, num_quantizers=4,
    upsample_rates=(2, 2), upsampling_ratios=(2,), decoder_dim=64, codebook_dim=32,
    max_position_embeddings=512)


class Code2WavDecodePath(torch.nn.Module):
    def __init__(self, config_kwargs: dict | None = None, prefix: int = PREFIX, chunk: int = CHUNK,
                 dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        from vllm_omni.model_executor.models.qwen3_tts.tokenizer_12hz.configuration_qwen3_tts_tokenizer_v2 import (
            Qwen3TTSTokenizerV2DecoderConfig,
        )
        from vllm_omni.model_executor.models.qwen3_tts.tokenizer_12hz.modeling_qwen3_tts_tokenizer_v2 import (
            Qwen3TTSTokenizerV2Decoder,
        )

        config = Qwen3TTSTokenizerV2DecoderConfig(**(TINY if config_kwargs is None else config_kwargs))
        config._attn_implementation = "eager"
        # Code2Wav.load_weights: self.decoder.to(dtype=model_config.dtype)
        self.decoder = Qwen3TTSTokenizerV2Decoder(config).to(dtype).eval()
        # What Qwen3TTSCode2Wav.load_weights sets on the decoder for async chunks.
        self.decoder._initial_codec_chunk_frames = 1
        self.decoder._incremental_chunk_frames = chunk
        self.q = config.num_quantizers
        self.codebook_size = config.codebook_size
        self.prefix, self.chunk = prefix, chunk
        self.sessions = sessions.Sessions()  # Code2Wav._decoder_state_cache

    def model_local_kv_specs(self):  # the Code2Wav's own hop to its decoder
        return self.decoder.model_local_kv_specs()

    def engine_step(self, requests: list[str]) -> None:
        codes_list, states = [], []
        for rid in requests:
            state = self.sessions.live.get(rid)
            if state is None:
                state = {"prefix_frames": self.prefix}
                self.sessions.live[rid] = state
                frames = self.prefix + 1
            else:
                frames = self.chunk
            codes_list.append(torch.randint(0, self.codebook_size, (self.q, frames)))
            states.append(state)
        lengths = [int(c.shape[-1]) for c in codes_list]
        codes = torch.zeros(len(codes_list), self.q, max(lengths), dtype=torch.long)
        for row, c in enumerate(codes_list):
            codes[row, :, : c.shape[-1]].copy_(c)
        codes = codes.to(next(self.decoder.parameters()).device)  # generated on the CPU: same codes anywhere
        with torch.inference_mode():
            self.decoder.batched_chunked_decode(codes, lengths, caches=states, chunk_size=300,
                                                left_context_size=25, max_batch_size=0)


def build() -> Code2WavDecodePath:
    torch.manual_seed(0)
    return Code2WavDecodePath()


def drive(model: Code2WavDecodePath, path: str, concurrency: int, steps: int) -> None:
    model.sessions.finish_all()  # on_requests_finished for the previous drive's requests
    requests = [f"{path}-{concurrency}-{i}" for i in range(concurrency)]
    for _ in range(steps):
        model.engine_step(requests)
