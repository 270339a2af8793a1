"""ming_flash_omni's talker (ming_flash_omni_talker.MingFlashOmniTalkerForConditionalGeneration).

Built by its own constructor, which builds the Qwen2 backbone, the CFM (DiT), the aggregator and
the stop head and hands them to `MingAudioGenerator` (talker_module.py), a plain object the
talker's `model_local_kv_specs` hops to. Driven as `forward` drives it (0.30.0): `forward` takes
`runtime_additional_information[0]` only and runs the whole AR loop inline, so requests are served
one after another; per request, `audio_generator.generate_latents(inputs_embeds, ...)`: the
generator's `_init_kv_cache` builds a `StaticCache(max_batch_size=1, max_cache_len=2048)`, the
prefill writes its full extent, every AR step runs `llm_step` and a CFM sampling step, and the
cache is dropped when the call returns (the declaration's INVOCATION scope, FIXED 1).

Shim (documented): the constructor reads `model_config.hf_config`, `model_config.model`,
`model_config.enforce_eager` and `load_config.download_dir` of its VllmConfig, so a namespace
stands for it; `model` is an empty local directory, so the AudioVAE and the voice presets find
nothing (waveform decoding, which `generate_latents` does not reach, is then unavailable) and
nothing is fetched (HF_HUB_OFFLINE=1 in the entry's env). The prompt embedding stands for
`build_tts_input`'s output (which needs the checkpoint's tokenizer). The config is a tiny random
MingFlashOmniTalkerConfig: a 2-layer Qwen2 backbone with 1 KV head of 32, a 1-block DiT and
aggregator, 2 CFM steps, patch 4, history 8, latent 16.
"""
from __future__ import annotations

import tempfile
from types import SimpleNamespace

import torch

HIDDEN = 64
PROMPT = 6  # prompt positions of the prefill


TINY_LLM = {"hidden_size": HIDDEN, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 32, "vocab_size": 32, "max_position_embeddings": 4096}
TINY_BLOCK = {"hidden_size": 32, "depth": 1, "num_heads": 2, "mlp_ratio": 2.0}
TINY_TALKER = dict(steps=2, patch_size=4, history_patch_size=8, latent_dim=16, cfg_strength=2.0)


def build(llm_config: dict | None = None, talker: dict | None = None, dtype: torch.dtype = torch.float32):
    from vllm_omni.model_executor.models.ming_flash_omni.ming_flash_omni_talker import (
        MingFlashOmniTalkerForConditionalGeneration,
    )
    from vllm_omni.transformers_utils.configs.ming_flash_omni import MingFlashOmniTalkerConfig

    torch.manual_seed(0)
    llm_config = llm_config or TINY_LLM
    talker = talker or TINY_TALKER
    config = MingFlashOmniTalkerConfig(
        llm_config=llm_config,
        flowmodel={"in_channels": talker["latent_dim"], "llm_cond_dim": llm_config["hidden_size"], **TINY_BLOCK},
        aggregator=dict(TINY_BLOCK), **talker)
    model_dir = tempfile.mkdtemp(prefix="kvlint-ming-talker-")
    vllm_config = SimpleNamespace(
        model_config=SimpleNamespace(hf_config=config, model=model_dir, enforce_eager=False),
        load_config=SimpleNamespace(download_dir=None))
    return MingFlashOmniTalkerForConditionalGeneration(vllm_config=vllm_config).to(dtype).eval()


def drive(model, path: str, concurrency: int, steps: int) -> None:
    hidden = model.audio_generator._llm_config.hidden_size
    dtype = next(model.parameters()).dtype
    for _ in range(concurrency):  # forward serves one request at a time
        prompt = torch.randn(1, PROMPT, hidden, dtype=dtype).to(next(model.parameters()).device)
        model.audio_generator.generate_latents(prompt, max_steps=steps, min_new_token=steps)
