"""NemotronVoiceChat's vendored talker paths: the eager session, TalkerStepGraph and DuplexEARTTS.

Built as the real stage builds it (0.30.0): `NemotronVoiceChatTalkerForConditionalGeneration`'s own
constructor (vendored path, `max_num_seqs` 1: it refuses more), then its `load_weights`, which
builds the vendored `DuplexEARTTS` from the `tts_cfg`/`tts_data` sections and loads the
`tts_model.*` tensors. Paths:

- `eager_session`: `_init_session` per request (the eager branch: `self.tts.tts_model(**init_inputs)`
  with `use_cache=True, past_key_values=None`, the cache kept in `self._sessions`), then one
  `_step_session` per engine step.
- `graph_bucket`: `TalkerStepGraph`, built as `load_weights` builds it under
  `use_talker_cuda_graphs` (on a CPU `config_supported()` refuses it, so the entry builds it
  directly), `ensure_captured(timeline_len)`: the bucket's StaticCache is built (2 rows: the CFG
  batch) and prefilled, then capture fails at `torch.cuda.Stream()` and the graph marks itself
  broken, keeping the bucket.
- `offline`: `DuplexEARTTS.offline_inference` on the same init inputs (NeMo's offline loop).

No network: `pretrained_lm_name` names a tokenizer built here (a WordLevel `tokenizers` model over
letters and a few words, saved with `PreTrainedTokenizerFast.save_pretrained` into a temp dir).
The checkpoint tensors are those of a second `DuplexEARTTS` built from the same tiny config
(random weights), plus the pre-baked speaker latent `audio_prompt_latents.Aria` the checkpoint
carries (unused by this config: no audio-prompt encoder or frozen projection). Shim (documented):
the constructor and `load_weights` read `model_config.hf_config`/`dtype`,
`scheduler_config.max_num_seqs` and `device_config.device`, so namespaces stand for the
VllmConfig and the checkpoint's hf_config. The config is tiny and random: a 2-layer Gemma3
backbone (1 KV head of 32, hidden 64), a 1-layer BERT character encoder, 4 quantizers of 16,
and an RVQ-VAE codec at 1600 Hz with 128 samples per 80 ms frame.
"""
from __future__ import annotations

import tempfile
from types import SimpleNamespace
from typing import Any

import torch

HIDDEN = 64
TIMELINE = 12  # frame-locked text positions per request


def _tokenizer_dir() -> str:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3}
    for token in list("abcdefghijklmnopqrstuvwxyz") + ["hello", "world", "the", "voice", "chat"]:
        vocab.setdefault(token, len(vocab))
    model = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    model.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=model, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   unk_token="<unk>")
    path = tempfile.mkdtemp(prefix="kvlint-nemotron-tokenizer-")
    fast.save_pretrained(path)
    return path


def _speech_generation_config(tokenizer_dir: str) -> tuple[dict, dict]:
    """The checkpoint's model.speech_generation section, tiny: (model, data)."""
    backbone = {"hidden_size": HIDDEN, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
                "num_key_value_heads": 1, "head_dim": 32, "max_position_embeddings": 4096, "sliding_window": 4096,
                "vocab_size": 8}
    model = {
        "pretrained_lm_name": tokenizer_dir,
        "bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>",
        "text_bos_dropout_prob": 0.0, "text_eos_dropout_prob": 0.0, "empty_turn_probability": 0.0,
        "inference_guidance_enabled": True,
        "tts_config": {
            "backbone_type": "gemma3_text", "backbone_config": backbone,
            "num_quantizers": 4, "codebook_size": 16, "latent_size": 16, "exponent": 1.0,
            "random_target_masking": False, "disable_eos_prediction": False, "context_hidden_size": None,
            "use_gated_fusion_for_text_audio": False, "use_subword_flag_emb": True, "use_bos_eos_emb": True,
            "label_smoothing": 0.0, "quantizer_dropout": 0.0, "p_uncond": 0.0, "max_training_rate": 1.0,
            "cas_config": {"backbone_type": None, "backbone_model_class": "BertModel",
                           "backbone_config_class": "BertConfig",
                           "backbone_config": {"hidden_size": HIDDEN, "num_hidden_layers": 1, "num_attention_heads": 2,
                                               "intermediate_size": 64, "vocab_size": 8}},
            "mog_head_config": {"intermediate_size": 64, "num_layers": 1, "num_predictions": 2, "low_rank": 8},
        },
        "codec_config": {"latent_size": 16, "n_fft": 32, "hop_length": 16, "base_hidden_size": 16,
                         "channel_mult": [1, 2], "rates": [2, 4], "num_blocks": 1, "kernel_size": 3, "groups": 1,
                         "codebook_size": 16, "num_quantizers": 4, "wav_to_token_ratio": 128},
    }
    data = {"source_sample_rate": 1600, "target_sample_rate": 1600, "frame_length": 0.08,
            "audio_prompt_duration": 0.32}
    return model, data


class VendoredTalkerStage(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from vllm_omni.model_executor.models.nemotron_voicechat.nemo_vendored.duplex_ear_tts import DuplexEARTTS
        from vllm_omni.model_executor.models.nemotron_voicechat.nemotron_voicechat_talker import (
            NemotronVoiceChatTalkerForConditionalGeneration,
            sanitize_tts_model_cfg,
        )
        from vllm_omni.model_executor.models.nemotron_voicechat.talker_graph import TalkerStepGraph

        model_cfg, data_cfg = _speech_generation_config(_tokenizer_dir())
        hf_config = SimpleNamespace(tts_cfg=model_cfg, tts_data=data_cfg, inference_speaker_name="Aria",
                                    use_talker_cuda_graphs=False, use_native_talker=False,
                                    talker_config=SimpleNamespace(hidden_size=HIDDEN, vocab_size=1024),
                                    target_sample_rate=1600, frame_length=0.08)
        vllm_config = SimpleNamespace(model_config=SimpleNamespace(hf_config=hf_config, dtype=torch.float32),
                                      scheduler_config=SimpleNamespace(max_num_seqs=1),
                                      device_config=SimpleNamespace(device=torch.device("cpu")))
        self.talker = NemotronVoiceChatTalkerForConditionalGeneration(vllm_config=vllm_config)
        checkpoint = DuplexEARTTS({"data": dict(data_cfg), "model": sanitize_tts_model_cfg(model_cfg)})
        weights = [(f"tts_model.{name}", tensor) for name, tensor in checkpoint.state_dict().items()]
        weights.append(("tts_model.audio_prompt_latents.Aria", torch.zeros(1, 4, HIDDEN)))
        del checkpoint
        self.talker.load_weights(iter(weights))
        self.step_graph: Any = TalkerStepGraph(self.talker.tts, dtype=torch.float32, device=torch.device("cpu"),
                                               max_cache_len=512,
                                               guidance_enabled=self.talker._guidance_enabled())


def build() -> VendoredTalkerStage:
    torch.manual_seed(0)
    return VendoredTalkerStage().eval()


def _info(i: int) -> dict:
    return {"nvc_text_timeline": torch.randint(4, 30, (TIMELINE,)), "nvc_logical_prompt_len": 2,
            "meta": {"request_id": f"req-{i}"}}


def drive(model: VendoredTalkerStage, path: str, concurrency: int, steps: int) -> None:
    talker = model.talker
    talker._sessions.clear()  # the previous drive's requests finish
    if path == "eager_session":
        for i in range(concurrency):
            session = talker._init_session(f"{path}-{concurrency}-{i}", _info(i), torch.device("cpu"))
            for _ in range(steps):
                talker._step_session(session)
    elif path == "graph_bucket":
        model.step_graph.ensure_captured(TIMELINE)
    elif path == "offline":
        tts = talker.tts
        with torch.inference_mode():
            for i in range(concurrency):
                tts.set_init_inputs(speaker_name="Aria")
                init_inputs = tts.get_init_inputs(B=1)
                tts.offline_inference(torch.randint(4, 30, (1, steps)), init_inputs, guidance_enabled=True)
    else:
        raise ValueError(path)
