"""MiniCPM-o 4.5's streaming Whisper encoder (minicpmo_4_5_omni_llm.MiniCPMWhisperEncoder).

Driven as the duplex stage-0 runtime drives it (duplex/stage0.py, 0.30.0): one
`_MiniCPMO45Stage0SessionState` per streaming session in `MiniCPMO45Stage0DuplexRuntime.sessions`;
per audio chunk, `_stage_audio_embeddings(chunk, state=state)` swaps the session's
`audio_past_key_values` into the thinker, calls the thinker's `get_audio_embedding_streaming`
(which runs the encoder with `use_cache=True`: an EncoderDecoderCache per session, built in
`MiniCPMWhisperEncoder.forward`) and stores the returned cache back on the session. Sessions stay
open until the next drive, as they do until a duplex session closes; concurrency is the number of
open sessions.

The runtime and the encoder are the real classes. Stand-in (documented): the thinker,
`MiniCPMO45OmniLLMForConditionalGeneration`, whose constructor builds vllm's LLM and the vision
tower, is an `AudioThinker` module holding what the audio path reads (`apm`, the real encoder;
`audio_projection_layer`, the real `MultiModalProjector`; `audio_avg_pooler`;
`audio_encoder_layer = -1`; `audio_past_key_values`; `config.audio_pool_step`), with the real
`get_audio_embedding_streaming` and `_get_feat_extract_output_lengths` functions. The runtime
gets no processor or tokenizer (`model_path=None`), which the audio path does not use. The
WhisperConfig is tiny and random (2 layers, 2 heads of 32, 16 mel bins, 64 source positions).
"""
from __future__ import annotations

from types import SimpleNamespace

import torch

MEL_FRAMES = 20  # mel frames per chunk: (20 - 1) // 2 + 1 - 1 suffix frame = 9 encoder positions


TINY = dict(num_mel_bins=16, d_model=64, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=256,
            max_source_positions=64, decoder_layers=1, decoder_attention_heads=2, decoder_ffn_dim=64)


def _audio_thinker_class():
    from vllm_omni.model_executor.models.minicpmo_4_5 import minicpmo_4_5_omni_llm as llm

    class AudioThinker(torch.nn.Module):
        get_audio_embedding_streaming = llm.MiniCPMO45OmniLLMForConditionalGeneration.get_audio_embedding_streaming
        _get_feat_extract_output_lengths = (
            llm.MiniCPMO45OmniLLMForConditionalGeneration._get_feat_extract_output_lengths)

        def __init__(self, audio_kwargs: dict) -> None:
            super().__init__()
            from transformers import WhisperConfig

            audio_config = WhisperConfig(**audio_kwargs)
            audio_config._attn_implementation = "eager"
            self.config = SimpleNamespace(audio_pool_step=2)
            # As MiniCPMO45OmniLLMForConditionalGeneration.__init__ builds its audio side.
            self.apm = llm.MiniCPMWhisperEncoder(audio_config)
            self.audio_avg_pooler = torch.nn.AvgPool1d(2, stride=2)
            self.audio_projection_layer = llm.MultiModalProjector(in_dim=audio_config.encoder_ffn_dim // 4, out_dim=64)
            self.audio_encoder_layer = -1
            self.audio_past_key_values = None

    return AudioThinker


class DuplexStage(torch.nn.Module):
    """The stage model: its `thinker` (a submodule, so its encoder's declaration is collected)."""

    def __init__(self, audio_kwargs: dict | None = None, dtype: torch.dtype = torch.float32,
                 chunk_mel_frames: list[int] | None = None) -> None:
        super().__init__()
        from vllm_omni.model_executor.models.minicpmo_4_5.duplex.stage0 import MiniCPMO45Stage0DuplexRuntime

        self.thinker = _audio_thinker_class()(TINY if audio_kwargs is None else audio_kwargs).to(dtype).eval()
        self.dtype = dtype
        self.mel_bins = self.thinker.apm.config.num_mel_bins
        # Mel frames of each step's chunk (the last one repeats): 20, 9 encoder positions, by default.
        self.chunk_mel_frames = chunk_mel_frames or [MEL_FRAMES]
        self.runtime = MiniCPMO45Stage0DuplexRuntime(self, model_path=None, device="cpu")


def build() -> DuplexStage:
    torch.manual_seed(0)
    return DuplexStage()


def drive(model: DuplexStage, path: str, concurrency: int, steps: int) -> None:
    from vllm_omni.model_executor.models.minicpmo_4_5.duplex.stage0 import _MiniCPMO45Stage0SessionState

    runtime = model.runtime
    runtime.sessions.clear()  # the previous drive's sessions close
    for i in range(concurrency):
        sid = f"{path}-{concurrency}-{i}"
        runtime.sessions[(sid, 0)] = _MiniCPMO45Stage0SessionState(session_id=sid)
    with torch.inference_mode():
        for step in range(steps):
            frames = model.chunk_mel_frames[min(step, len(model.chunk_mel_frames) - 1)]
            for state in runtime.sessions.values():
                features = torch.randn(1, model.mel_bins, frames, dtype=model.dtype)
                chunk = {"audio_features": features.to(next(model.parameters()).device),
                         "audio_feature_lens": [torch.tensor([frames])]}
                runtime._stage_audio_embeddings(chunk, state=state)
