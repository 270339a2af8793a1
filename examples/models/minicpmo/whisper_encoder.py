"""MiniCPM-o-style streaming Whisper encoder: one EncoderDecoderCache per session (correct)."""
import torch
from torch import nn
from transformers import DynamicCache, EncoderDecoderCache

from vllm_omni.model_local_kv import ModelLocalKVScope, RowDriver, spec_from_hf_config


class StreamingWhisperEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self._session_caches = {}

    def forward(self, session_id, features, streaming: bool = False):
        if streaming:
            if session_id not in self._session_caches:
                self._session_caches[session_id] = EncoderDecoderCache(DynamicCache(), DynamicCache())
            assert features.shape[0] == 1, "streaming encodes one session at a time"
        return features

    def model_local_kv_specs(self):
        return [
            spec_from_hf_config(
                self.config,
                name="whisper_encoder_session_kv",
                physical_capacity_positions=self.config.max_source_positions,
                capacity_source="embed_positions rows (max_source_positions)",
                scope=ModelLocalKVScope.SESSION,
                dtype=torch.float16,
                rows=RowDriver.FIXED,
                rows_fixed=1,
                rows_reason="one streaming session; the session cap is not visible from the model",
                allocation_note="one EncoderDecoderCache per session, streaming path only",
            )
        ]
