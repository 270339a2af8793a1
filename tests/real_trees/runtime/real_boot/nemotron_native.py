"""NemotronVoiceChat's native-path CFG stream: talker_native.UncondStream and UncondStepGraph.

Driven as NemotronVoiceChatTalkerForConditionalGeneration._init_native_session and
_native_preprocess drive them (0.30.0): per request, the captured UncondStepGraph when it is
free (one session at a time; on a CPU its capture fails at torch.cuda.Stream() after the bucket's
StaticCache is built and prefilled, and the talker falls back), else an eager UncondStream with
its own DynamicCache; one uncond decode step per frame. The backbone is a tiny random HF
Gemma3TextModel, which is what the vendored RVQEARTTSModel's `.backbone` is (its config comes
from talker_native.synthesize_backbone_config). Both classes need only torch.
"""
from __future__ import annotations

from typing import Any

import torch

from . import sessions

HIDDEN = 64
PREFILL = 12  # speaker-prompt positions


class VendoredTTSModel(torch.nn.Module):
    """Stands where the vendored RVQEARTTSModel stands: UncondStream/UncondStepGraph use `.backbone`."""

    def __init__(self, backbone: torch.nn.Module) -> None:
        super().__init__()
        self.backbone = backbone


class NativeTalkerCFG(torch.nn.Module):
    def __init__(self, mode: str) -> None:
        super().__init__()
        from transformers import AutoConfig, AutoModel

        from vllm_omni.model_executor.models.nemotron_voicechat.talker_native import synthesize_backbone_config

        # The checkpoint's NeMo backbone dict, tiny: the talker builds its Gemma3 config from it.
        config = synthesize_backbone_config({
            "backbone_type": "gemma3_text",
            "backbone_config": {
                "hidden_size": HIDDEN, "intermediate_size": 128, "num_hidden_layers": 2,
                "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
                "max_position_embeddings": 4096, "sliding_window": 4096, "use_cache": True,
            },
        })
        config._attn_implementation = "eager"
        del AutoConfig
        self.tts_model = VendoredTTSModel(AutoModel.from_config(config).eval())
        self.mode = mode
        self.sessions = sessions.Sessions()
        self._uncond_graph: Any = None

    def on_requests_finished(self) -> None:
        def release(rid: str, state: Any) -> None:
            if self._uncond_graph is not None:
                self._uncond_graph.release(rid)

        self.sessions.finish_all(release)

    def init_session(self, rid: str) -> None:
        from vllm_omni.model_executor.models.nemotron_voicechat.talker_native import UncondStepGraph, UncondStream

        prefill = torch.randn(1, PREFILL, HIDDEN)
        stream: Any = None
        if self.mode == "graph":
            if self._uncond_graph is None:
                self._uncond_graph = UncondStepGraph(self.tts_model, hidden_size=HIDDEN, dtype=torch.float32,
                                                     device=torch.device("cpu"), max_cache_len=512)
            if self._uncond_graph.start_session(rid, prefill, PREFILL + 64 + 8):
                stream = self._uncond_graph
        if stream is None:
            stream = UncondStream(self.tts_model)
            stream.prefill(prefill)
        self.sessions.live[rid] = stream

    def step_all(self) -> None:
        for stream in self.sessions.live.values():
            if hasattr(stream, "pos"):  # eager UncondStream (the graph, when captured, replays on CUDA only)
                stream.step(torch.randn(1, 1, HIDDEN))


def build() -> NativeTalkerCFG:
    torch.manual_seed(0)
    return NativeTalkerCFG("graph")


def drive(model: NativeTalkerCFG, path: str, concurrency: int, steps: int) -> None:
    model.on_requests_finished()
    for i in range(concurrency):
        model.init_session(f"{path}-{concurrency}-{i}")
    for _ in range(steps):
        model.step_all()
