"""VibeVoice's negative-CFG K/V pool (0.32.0rc1, vibevoice/negative_kv.py), on CUDA only.

`VibeVoiceNegativeKV` allocates a paged raw K/V pool itself, one `torch.empty` per layer of
`(max_num_seqs * ceil(max_model_len / block_size), kv_heads, block_size, 2 * head_dim)` bf16, and
declares it (`vibevoice_negative_kv_pool`, MAX_NUM_SEQS rows of one slot's page range each); the
root model forwards that declaration. `allocate` refuses a CPU device, any dtype but bf16 and any
attention backend but vLLM's FlashAttention 3, so this entry is booted by `runtime/gpu-check` when a
GPU is lent (tests/real_trees/runtime/kvlint_0_32_gpu.toml), not by the CPU real-tree test.

Booted as `VibeVoiceForConditionalGeneration` builds and serves it: the pool over a vLLM
`Qwen2Model` (the real class, tiny: 2 layers, 2 KV heads of 64, block 16, max_model_len 64,
max_num_seqs 4), `allocate` as `load_weights` calls it (in the factory: before any path, as before
memory profiling), then per step `acquire` per request and `forward_step` (the pool bound into the
shared attention layers, vLLM's `unified_kv_cache_update` writing it through the forward context,
which the dispatch mode does not show: the harness sees the write by the pool's changed contents).
Requests stay in flight until the next drive releases them. Stand-in (documented): the root
module is a `NegativeKVRoot` holding `negative_kv` and forwarding its `model_local_kv_specs()` as
the real root does (vibevoice.py:324); its constructor would build the whole VibeVoice model.
Needs a CUDA build of vllm (vllm._C, vllm_flash_attn with FA3: Hopper) in the interpreter.
"""
from __future__ import annotations

from types import SimpleNamespace

import torch

from real_boot.mimo_audio import _free_port

LAYERS, HEADS, KV_HEADS, HEAD_DIM, HIDDEN = 2, 4, 2, 64, 256
BLOCK_SIZE, MAX_MODEL_LEN, MAX_NUM_SEQS = 16, 64, 4


class NegativeKVRoot(torch.nn.Module):
    def __init__(self, language_model: torch.nn.Module, negative_kv) -> None:
        super().__init__()
        self.language_model = language_model
        self.negative_kv = negative_kv
        self.live: list[str] = []

    def model_local_kv_specs(self):
        return self.negative_kv.model_local_kv_specs()


def build() -> NegativeKVRoot:
    from transformers import Qwen2Config
    from vllm.config import CacheConfig, DeviceConfig, SchedulerConfig, VllmConfig, set_current_vllm_config
    from vllm.distributed import init_distributed_environment, initialize_model_parallel
    from vllm.model_executor.models.qwen2 import Qwen2Model

    from vllm_omni.model_executor.models.vibevoice.negative_kv import VibeVoiceNegativeKV

    torch.manual_seed(0)
    text_config = Qwen2Config(vocab_size=128, hidden_size=HIDDEN, intermediate_size=512, num_hidden_layers=LAYERS,
                              num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=256)
    vllm_config = VllmConfig(device_config=DeviceConfig(device="cuda"), cache_config=CacheConfig(block_size=BLOCK_SIZE),
                             scheduler_config=SchedulerConfig(max_num_seqs=MAX_NUM_SEQS, max_model_len=MAX_MODEL_LEN,
                                                              is_encoder_decoder=False))
    # Held for the child process's life: vllm's layers read the current config when built.
    context = set_current_vllm_config(vllm_config)
    context.__enter__()
    init_distributed_environment(world_size=1, rank=0, local_rank=0, backend="nccl",
                                 distributed_init_method=f"tcp://127.0.0.1:{_free_port()}")
    initialize_model_parallel(1, 1)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        language_model = Qwen2Model(vllm_config=SimpleNamespace(
            model_config=SimpleNamespace(hf_config=text_config), cache_config=vllm_config.cache_config,
            quant_config=None), prefix="model.language_model")
    # What the pool reads of the VllmConfig: model_config (hf_config, max_model_len), cache_config,
    # scheduler_config, and the config itself for the attention metadata builder.
    object.__setattr__(vllm_config, "model_config", SimpleNamespace(
        hf_config=text_config, max_model_len=MAX_MODEL_LEN, dtype=torch.bfloat16, is_mm_prefix_lm=False))
    negative_kv = VibeVoiceNegativeKV(language_model=language_model, vllm_config=vllm_config)
    negative_kv.allocate(device=torch.device("cuda"), dtype=torch.bfloat16)  # as load_weights does
    return NegativeKVRoot(language_model, negative_kv).eval()


def drive(root: NegativeKVRoot, path: str, concurrency: int, steps: int) -> None:
    pool = root.negative_kv
    for request_id in root.live:  # on_requests_finished for the previous drive's requests
        pool.release(request_id)
    root.live = [f"{path}-{concurrency}-{i}" for i in range(concurrency)]
    for request_id in root.live:
        pool.acquire(request_id)
    with torch.inference_mode():
        for _ in range(steps):
            embeddings = [torch.randn(1, HIDDEN, dtype=torch.bfloat16, device="cuda") for _ in root.live]
            pool.forward_step(root.live, embeddings)
    torch.cuda.synchronize()
