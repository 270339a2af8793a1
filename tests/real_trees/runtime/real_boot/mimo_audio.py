"""MiMo-Audio's local transformer (mimo_audio_llm.MiMoAudioLLMForConditionalGeneration).

Driven as MiMoAudioLLMForConditionalGeneration.forward drives it (0.30.0): once per engine step,
the last hidden state of every request in the batch (stacked, `[num_reqs, 1, hidden]`) goes to
`_generate_speech_tokens_and_audio_embeddings`, whose `local_forward` runs `base_local_forward`:
one DynamicCache, `num_reqs` rows wide, `group_size + max(delay_pattern)` positions, dropped
when the call returns (the declaration's `local_transformer`, MAX_NUM_SEQS, INVOCATION).

On a CPU the constructor skips both CUDA-graph captures (`torch.cuda.is_available()` is false),
so `local_forward_cg_by_bs` stays empty and the second declared entry
(`local_transformer_graph_pool`) is not declared: the graph pool and its KV303 need a GPU.

Real vllm where the class needs it: `ColumnParallelLinear` and `LogitsProcessor` are vllm's,
built under `set_current_vllm_config(VllmConfig(device_config=DeviceConfig("cpu")))` with vllm's
parallel state initialised for world size 1 on gloo. Shim (documented): the text backbone
(`init_vllm_registered_model(..., architectures=["Qwen2ForCausalLM"])`, vllm's attention layers,
which need vllm's compiled ops) is replaced by an empty module in the factory; the local path
never calls it. The constructor reads `model_config.hf_config`, `quant_config` and `lora_config`
of its VllmConfig only, so a namespace stands for it, as in ming_tts_vae.py. The config is a
tiny random MiMoAudioConfig (4 audio channels, group 4, delay 0-1-2-3, a 2-layer local
transformer with 2 KV heads of 32), in bf16 as the checkpoint loads.
"""
from __future__ import annotations

import socket
from types import SimpleNamespace

import torch

HIDDEN = 64


class TextBackboneStandIn(torch.nn.Module):
    """Stands for vllm's Qwen2ForCausalLM text model, which the local path never calls."""

    def make_empty_intermediate_tensors(self, *args, **kwargs):  # read by the constructor only
        return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


TINY = dict(
    vocab_size=64, hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
    num_key_value_heads=1, head_dim=32, max_position_embeddings=512,
    speech_vocab_size="17-17-9-9", speech_zeroemb_idx="16-16-8-8", delay_pattern="0-1-2-3",
    group_size=4, audio_channels=4, local_dim=64, local_layers=2, local_attn_heads=2, local_ffn_dim=128,
    input_local_layers=1, input_local_dim=64)


def build(config_kwargs: dict | None = None):
    from vllm.config import DeviceConfig, VllmConfig, set_current_vllm_config
    from vllm.distributed import init_distributed_environment, initialize_model_parallel

    from vllm_omni.model_executor.models.mimo_audio import mimo_audio_llm
    from vllm_omni.model_executor.models.mimo_audio.config_mimo_audio import MiMoAudioConfig

    torch.manual_seed(0)
    # Held for the child process's life: vllm's layers read the current config when built.
    context = set_current_vllm_config(VllmConfig(device_config=DeviceConfig(device="cpu")))
    context.__enter__()
    init_distributed_environment(world_size=1, rank=0, local_rank=0, backend="gloo",
                                 distributed_init_method=f"tcp://127.0.0.1:{_free_port()}")
    initialize_model_parallel(1, 1)

    # num_hidden_layers >= local_layers: the local configs are deep copies that keep layer_types.
    config = MiMoAudioConfig(**(TINY if config_kwargs is None else config_kwargs))
    mimo_audio_llm.init_vllm_registered_model = lambda **kwargs: TextBackboneStandIn()
    vllm_config = SimpleNamespace(model_config=SimpleNamespace(hf_config=config), quant_config=None, lora_config=None)
    model = mimo_audio_llm.MiMoAudioLLMForConditionalGeneration(vllm_config=vllm_config)
    return model.to(torch.bfloat16).eval()


def drive(model, path: str, concurrency: int, steps: int) -> None:
    hidden = model.config.hidden_size
    with torch.inference_mode():
        for _ in range(steps):
            # forward's batch_hs: each request's last hidden state, stacked
            batch_hs = torch.randn(concurrency, 1, hidden, dtype=torch.bfloat16).to(next(model.parameters()).device)
            model._generate_speech_tokens_and_audio_embeddings(batch_hs)
