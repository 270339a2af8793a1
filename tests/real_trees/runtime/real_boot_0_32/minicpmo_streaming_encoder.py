"""MiniCPM-o 4.5's batched streaming Whisper encoder (0.32.0rc1, streaming_audio_encoder.py).

Driven as the duplex stage-0 runtime drives it (duplex/stage0.py): one
`_MiniCPMO45Stage0SessionState` per open session in `MiniCPMO45Stage0DuplexRuntime.sessions`; per
step, `_stage_audio_embeddings_batch` takes one `_MiniCPMO45AudioEncodeRequest` per session, finds
the thinker's batched encoder (`supports_streaming_audio_batch`, `get_audio_embedding_streaming_batch`)
and runs `encode_streaming_audio_batch` over all sessions in one pass, which keeps each session's
K/V in a `StreamingAudioKVCache` (a raw `[layers, 2, capacity, d_model]` tensor grown in pages up
to `embed_positions`) stored back on the session as `audio_past_key_values`. No CUDA graph on a
CPU: `build_audio_cuda_graph` returns early (no processor) and the thinker's graph encoder is unset.

The runtime, the encoder, the KV cache class and the batched encoder are the real ones. Stand-in
(documented, the 0.30.0 entry's, real_boot/minicpmo_whisper.py): the thinker `MiniCPMO45OmniLLMForConditionalGeneration`, whose constructor builds
vllm's LLM and the vision tower, is an `AudioThinker` module holding what the audio path reads
(`apm`, the real `MiniCPMWhisperEncoder`; `audio_projection_layer`, the real `MultiModalProjector`;
`audio_avg_pooler`; `audio_encoder_layer = -1`; `config.audio_pool_step` and
`config.duplex_audio_kv_page_positions`), with the real `supports_streaming_audio_batch`,
`get_audio_embedding_streaming_batch` and `_duplex_audio_kv_page_positions` functions. The
WhisperConfig is tiny and random (2 layers, 2 heads of 32, 16 mel bins, 64 source positions) and
the page is 16 positions (250 of 1500 upstream), so 7 units of 9 positions grow each session's
buffer 16 -> 32 -> 48 -> 64 = embed_positions, the declared capacity.
"""
from __future__ import annotations

import torch

from real_boot.minicpmo_whisper import MEL_FRAMES, TINY, _audio_thinker_class

PAGE_POSITIONS = 16


def _batched_thinker_class():
    """The 0.30.0 entry's AudioThinker (same audio side, imported here from the 0.32.0rc1 tree)
    with the thinker's batched streaming-encoder functions of 0.32.0rc1."""
    from vllm_omni.model_executor.models.minicpmo_4_5 import minicpmo_4_5_omni_llm as llm

    real = llm.MiniCPMO45OmniLLMForConditionalGeneration

    class BatchedAudioThinker(_audio_thinker_class()):
        supports_streaming_audio_batch = real.supports_streaming_audio_batch
        get_audio_embedding_streaming_batch = real.get_audio_embedding_streaming_batch
        _duplex_audio_kv_page_positions = real._duplex_audio_kv_page_positions

        def __init__(self) -> None:
            super().__init__(TINY)
            self.config.duplex_audio_kv_page_positions = PAGE_POSITIONS

    return BatchedAudioThinker


class DuplexStage(torch.nn.Module):
    """The stage model: its `thinker` (a submodule, so its encoder's declaration is collected)."""

    def __init__(self) -> None:
        super().__init__()
        from vllm_omni.model_executor.models.minicpmo_4_5.duplex.stage0 import MiniCPMO45Stage0DuplexRuntime

        self.thinker = _batched_thinker_class()().eval()
        self.runtime = MiniCPMO45Stage0DuplexRuntime(self, model_path=None, device="cpu")


def build() -> DuplexStage:
    torch.manual_seed(0)
    return DuplexStage()


def drive(model: DuplexStage, path: str, concurrency: int, steps: int) -> None:
    from vllm_omni.model_executor.models.minicpmo_4_5.duplex.stage0 import (
        _MiniCPMO45AudioEncodeRequest,
        _MiniCPMO45Stage0SessionState,
    )

    runtime = model.runtime
    runtime.sessions.clear()  # the previous drive's sessions close
    for i in range(concurrency):
        sid = f"{path}-{concurrency}-{i}"
        runtime.sessions[(sid, 0)] = _MiniCPMO45Stage0SessionState(session_id=sid)
    with torch.inference_mode():
        for _ in range(steps):
            requests = [
                _MiniCPMO45AudioEncodeRequest(
                    batch_feature={"audio_features": torch.randn(1, 16, MEL_FRAMES),
                                   "audio_feature_lens": [torch.tensor([MEL_FRAMES])]},
                    state=state)
                for state in runtime.sessions.values()
            ]
            embeds = runtime._stage_audio_embeddings_batch(requests)
            if any(e is None for e in embeds):
                raise RuntimeError("a session's unit was not encoded")
    if runtime._batched_audio_encoder() is None:
        raise RuntimeError("the batched streaming encoder was not taken (per-session path)")
