"""Qwen3-TTS-style codec decoder: a sliding-window DynamicCache per streaming request."""
import torch
from torch import nn
from transformers import DynamicCache, MistralModel

from vllm_omni.model_local_kv import ModelLocalKVScope, RowDriver, spec_from_hf_config


class StreamingCodecDecoder(nn.Module):
    def __init__(self, config, async_chunk: bool):
        super().__init__()
        self.config = config
        self.async_chunk = async_chunk
        self.transformer = MistralModel(config)
        self._caches = {}

    def forward(self, request_id, codes):
        if self.async_chunk:
            cache = self._caches.get(request_id)
            if cache is None:
                cache = DynamicCache(config=self.config)
                self._caches[request_id] = cache
            return self.transformer(inputs_embeds=codes, past_key_values=cache, use_cache=True).last_hidden_state
        return self._forward_exact(codes)

    def _forward_exact(self, codes):
        # Stateless decoding: no use_cache, nothing kept.
        return self.transformer(inputs_embeds=codes, use_cache=False).last_hidden_state

    def finish(self, request_id):
        self._caches.pop(request_id, None)

    def model_local_kv_specs(self):
        # Declared unconditionally, though only the async-chunk path allocates;
        # and as one fixed row, though the cache is kept per request.
        return [
            spec_from_hf_config(
                self.config,
                name="codec_decoder_sliding_kv",
                physical_capacity_positions=self.config.sliding_window - 1,
                capacity_source="config.sliding_window - 1",
                scope=ModelLocalKVScope.REQUEST,
                dtype=torch.bfloat16,
                rows=RowDriver.FIXED,
                rows_fixed=1,
                rows_reason="one decoder",
            )
        ]
