"""MiMo-Audio-style local transformer: a per-call DynamicCache and a bucketed CUDA-graph pool."""
import torch
from torch import nn
from transformers import DynamicCache

from vllm_omni.model_local_kv import ModelLocalKVScope, RowDriver, spec_from_hf_config

BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128)


class LocalTransformer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.layers = nn.ModuleList()
        self.graphs = {}
        if torch.cuda.is_available():
            self._capture_buckets()

    def _decode(self, hidden, steps):
        cache = DynamicCache(config=self.config)
        for _ in range(steps):
            hidden = self.step(hidden, cache)
        return hidden

    def step(self, hidden, cache):
        # One local position: every layer writes its key/value (the attention
        # arithmetic is elided; the cache geometry is what matters here).
        cfg = self.config
        head_dim = cfg.hidden_size // cfg.num_attention_heads
        kv = hidden.new_zeros(hidden.shape[0], cfg.num_key_value_heads, 1, head_dim, dtype=cfg.dtype)
        for layer_idx in range(cfg.num_hidden_layers):
            cache.update(kv, kv, layer_idx)
        return hidden

    def _capture_buckets(self):
        for bucket in BUCKETS:
            graph = torch.cuda.CUDAGraph()
            static_in = torch.zeros(bucket, self.config.hidden_size, device="cuda")
            with torch.cuda.graph(graph):
                self._decode(static_in, self.config.group_size + max(self.config.delay_pattern))
            self.graphs[bucket] = graph

    def model_local_kv_specs(self):
        positions = self.config.group_size + max(self.config.delay_pattern)
        return [
            spec_from_hf_config(
                self.config,
                name="local_transformer_kv",
                physical_capacity_positions=positions,
                capacity_source="group_size + max(delay_pattern)",
                scope=ModelLocalKVScope.INVOCATION,
                dtype=torch.bfloat16,
                rows=RowDriver.MAX_NUM_SEQS,
            )
        ]
