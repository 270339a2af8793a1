"""PersonaPlex's Mimi streaming transformer (0.32.0rc1, personaplex_mimi.py / personaplex_temporal.py).

`_MimiStreamingTransformer.streaming_init(batch)` builds one `_RingKV` per layer (a raw
`(2, batch, heads, context, head_dim)` tensor, K and V packed on the leading axis) and `step`
writes each frame's K/V into it by `scatter_` and attends over it with SDPA. Booted as
`PersonaPlexCode2Wav._install_mimi` sizes it: `streaming_init(max_codec_sessions + 1)` (one row per
codec session plus a scratch row) on the decoder half, each session a row stepped every frame.

The transformer, its layers and `_RingKV` are the real classes. Stand-in (documented): the codec
`PersonaPlexMimiCodec`, whose constructor downloads the nvidia/personaplex-7b-v1 Mimi checkpoint
and builds HF's full-size MimiModel, is a `MimiCodec` module holding its `decoder_transformer`
(as the real codec does after it drops HF's transformer stacks). Tiny and random: 2 layers,
dim 64, 2 heads of 32, context 16 (8 layers, 512, 8 heads, 250 upstream), fp32 as upstream.
"""
from __future__ import annotations

import torch

FRAME_POSITIONS = 2  # positions per step (the codec's 12.5 Hz frame at the transformer's 25 Hz)


class MimiCodec(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from vllm_omni.model_executor.models.personaplex.personaplex_mimi import _MimiStreamingTransformer

        self.decoder_transformer = _MimiStreamingTransformer(num_layers=2, dim=64, num_heads=2, context=16)
        for p in self.decoder_transformer.parameters():  # weights as load_weights would leave them
            torch.nn.init.normal_(p, std=0.02)


def build() -> MimiCodec:
    torch.manual_seed(0)
    return MimiCodec().eval()


def drive(model: MimiCodec, path: str, concurrency: int, steps: int) -> None:
    rows = concurrency + 1  # PersonaPlexCode2Wav: max_codec_sessions + 1 (the scratch row)
    transformer = model.decoder_transformer
    transformer.streaming_init(rows)
    active = torch.ones(rows, dtype=torch.bool)
    active[-1] = False  # the scratch row only pads
    with torch.inference_mode():
        for _ in range(steps):
            transformer.step(torch.randn(rows, FRAME_POSITIONS, 64), active)
