"""ming_flash_omni-style talker: a serialized StaticCache of 2048 positions per call."""
import torch
from torch import nn
from transformers import StaticCache

from vllm_omni.model_local_kv import ModelLocalKVScope, RowDriver, spec_from_hf_config

TALKER_MAX_CACHE_LEN = 2048


class MingAudioGenerator:
    """Not a submodule: the talker holds it as a plain attribute."""

    def __init__(self, llm_config):
        self._llm_config = llm_config

    def generate(self, inputs_embeds):
        cache = StaticCache(config=self._llm_config, max_cache_len=TALKER_MAX_CACHE_LEN)
        return self.decode_loop(inputs_embeds, cache)

    def decode_loop(self, inputs_embeds, cache):
        # The LLM's AR loop, reduced to what it leaves in the cache: every layer
        # writes one key/value position per generated token.
        cfg = self._llm_config
        head_dim = cfg.hidden_size // cfg.num_attention_heads
        kv = inputs_embeds.new_zeros(inputs_embeds.shape[0], cfg.num_key_value_heads, 1, head_dim,
                                     dtype=cfg.dtype)
        for position in range(inputs_embeds.shape[1]):
            cache_position = torch.tensor([position], device=inputs_embeds.device)
            for layer_idx in range(cfg.num_hidden_layers):
                cache.update(kv, kv, layer_idx, {"cache_position": cache_position})
        return inputs_embeds

    def model_local_kv_specs(self):
        return [
            spec_from_hf_config(
                self._llm_config,
                name="talker_static_kv",
                physical_capacity_positions=1024,
                capacity_source="StaticCache max_cache_len",
                scope=ModelLocalKVScope.INVOCATION,
                dtype=torch.bfloat16,
                rows=RowDriver.MAX_NUM_SEQS,
            )
        ]


class MingTalker(nn.Module):
    def __init__(self, llm_config):
        super().__init__()
        self.generator = MingAudioGenerator(llm_config)

    def forward(self, runtime_additional_information):
        # Serialized: one request's information at a time.
        info = runtime_additional_information[0]
        return self.generator.generate(info["inputs_embeds"])
