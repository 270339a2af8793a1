"""Qwen3-TTS's stage-1 Code2Wav (qwen3_tts_code2wav.Qwen3TTSCode2Wav) on its async-chunk path.

The whole class, not only its decoder (qwen3_tts_decoder.py boots that alone): built by its own
constructor from a VllmConfig, its decoder weights loaded by its own `load_weights` (vllm's
DefaultModelLoader and AutoWeightsLoader reading a safetensors file written here), driven through
`forward` as GenerationModelRunner drives it (0.30.0): once per engine step, under vllm's
`set_forward_context`, with every scheduled request's flat codebook-major codes concatenated in
`input_ids`, `seq_token_counts`, the scheduler-side `request_ids` (`requires_request_ids`) and the
per-request `runtime_additional_information` meta; finished requests go to
`on_requests_finished`, which evicts their state from `_decoder_state_cache`.

async_chunk is on (`model_config.async_chunk`), so `forward` keeps one state dict per request and
hands them to `decoder.batched_chunked_decode(..., caches=request_states)`: the retained sliding
DynamicCache per request and its per-chunk `copy.deepcopy` working copies. The first chunk of each
request carries its ICL reference prefix (`ref_context_size`, `ref_context_included`), as the
stage-0 async-chunk producer sends it. `enforce_eager` is set and the device is the CPU, so
`load_weights` never builds the decoder's CUDA-graph wrapper (`_maybe_enable_decoder_cudagraph` is
called only for a CUDA device and returns under enforce_eager): `_cudagraph_wrapper` stays None,
and the decoder's `model_local_kv_specs()` declares nothing although the path allocates
(issue 19, Deliver 4).

Real vllm: VllmConfig with DeviceConfig(device="cpu") and LoadConfig, `set_forward_context` (which
Code2Wav reads through `is_forward_context_available`/`get_forward_context().ubatch_slices` when
one request is scheduled), DefaultModelLoader, AutoWeightsLoader, WeightsMapper.
Stand-in (documented): `vllm_config.model_config` is a namespace with the fields Code2Wav reads
(model, async_chunk, enforce_eager, stage_connector_config, revision, dtype) in place of
vllm-omni's OmniModelConfig, whose construction resolves a full Qwen3-TTS checkpoint config
(talker, code predictor) through transformers' registry; the stage-1 class never reads more.
The checkpoint is a temporary folder written by build(): speech_tokenizer/config.json (a tiny
Qwen3TTSTokenizerV2Config: 2 decoder layers, 2 KV heads of 32, sliding window 8) and
speech_tokenizer/model.safetensors with random decoder weights. Nothing is downloaded.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

import torch

from . import sessions

PREFIX = 8  # ICL reference frames = the sliding window (the grouped icl_prefix phase)
CHUNK = 4  # new codec frames per engine step after the first (codec_chunk_frames)
DECODER = dict(
    codebook_size=64, hidden_size=64, latent_dim=64, num_attention_heads=2, num_key_value_heads=2, head_dim=32,
    sliding_window=PREFIX, intermediate_size=128, num_hidden_layers=2, num_quantizers=4, upsample_rates=[2, 2],
    upsampling_ratios=[2], decoder_dim=64, codebook_dim=32, max_position_embeddings=512)


def _write_checkpoint(root: Path) -> None:
    """speech_tokenizer/ as Code2Wav reads it: the tokenizer config and decoder.* weights."""
    from safetensors.torch import save_file

    from vllm_omni.model_executor.models.qwen3_tts.tokenizer_12hz.configuration_qwen3_tts_tokenizer_v2 import (
        Qwen3TTSTokenizerV2Config,
    )
    from vllm_omni.model_executor.models.qwen3_tts.tokenizer_12hz.modeling_qwen3_tts_tokenizer_v2 import (
        Qwen3TTSTokenizerV2Decoder,
    )

    folder = root / "speech_tokenizer"
    config = Qwen3TTSTokenizerV2Config(decoder_config=DECODER)
    config.save_pretrained(folder)
    decoder = Qwen3TTSTokenizerV2Decoder._from_config(config.decoder_config)
    weights = {f"decoder.{k}": v.detach().contiguous() for k, v in decoder.state_dict().items()}
    save_file(weights, str(folder / "model.safetensors"))


class Code2WavEngine(torch.nn.Module):
    """The generation runner's view of one Code2Wav stage: requests, forward context, finish.

    A module holding the Code2Wav as its submodule, so the declaration walk reaches the real
    classes as the engine's does (Code2Wav declares nothing itself; its decoder does).
    """

    def __init__(self, model, vllm_config) -> None:
        super().__init__()
        self.model = model
        self.vllm_config = vllm_config
        self.q = model._num_quantizers
        self.sessions = sessions.Sessions()  # request id -> frames sent so far

    def step(self, requests: list[str]) -> None:
        from vllm.forward_context import set_forward_context

        codes, infos = [], []
        for rid in requests:
            first = rid not in self.sessions.live
            frames = PREFIX + 1 if first else CHUNK
            self.sessions.live[rid] = self.sessions.live.get(rid, 0) + frames
            codes.append(torch.randint(0, 64, (self.q * frames,)))
            meta = {"request_id": rid, "finished": False}
            if first:
                meta.update(ref_context_size=PREFIX, ref_context_request_id=rid, ref_context_included=True)
            infos.append({"meta": meta})
        input_ids = torch.cat(codes)
        with torch.inference_mode(), set_forward_context(None, self.vllm_config, num_tokens=int(input_ids.numel())):
            self.model(input_ids=input_ids, positions=None, runtime_additional_information=infos,
                       seq_token_counts=[int(c.numel()) for c in codes], request_ids=list(requests))

    def finish_all(self) -> None:
        self.model.on_requests_finished(list(self.sessions.live))
        self.sessions.finish_all()


def build() -> Code2WavEngine:
    from vllm.config import DeviceConfig, LoadConfig, VllmConfig

    from vllm_omni.model_executor.models.qwen3_tts.qwen3_tts_code2wav import Qwen3TTSCode2Wav

    torch.manual_seed(0)
    root = Path(tempfile.mkdtemp(prefix="kvlint-qwen3-tts-"))
    try:
        _write_checkpoint(root)
        vllm_config = VllmConfig(device_config=DeviceConfig(device="cpu"), load_config=LoadConfig())
        # The documented stand-in for OmniModelConfig (see the module docstring).
        model_config = SimpleNamespace(
            model=str(root), revision=None, dtype=torch.float32, async_chunk=True, enforce_eager=True,
            stage_connector_config={"name": "SharedMemoryConnector",
                                    "extra": {"codec_chunk_frames": CHUNK, "codec_left_context_frames": PREFIX}})
        code2wav_config = SimpleNamespace(model_config=model_config, load_config=vllm_config.load_config,
                                          device_config=vllm_config.device_config)
        model = Qwen3TTSCode2Wav(vllm_config=code2wav_config)
        model.load_weights(iter(()))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert model.decoder._cudagraph_wrapper is None  # the enforce_eager / CPU condition under test
    return Code2WavEngine(model.eval(), vllm_config)


def drive(engine: Code2WavEngine, path: str, concurrency: int, steps: int) -> None:
    engine.finish_all()  # on_requests_finished for the previous drive's requests
    requests = [f"{path}-{concurrency}-{i}" for i in range(concurrency)]
    for _ in range(steps):
        engine.step(requests)
