"""The harness reproduces the reference table's per-row figures and rows."""
from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, MIB


def codec(harness):
    return harness("codec", "codec_decoder.model", ["streaming", "stateless"], [1, 4])


def local(harness):
    return harness("local", "local_transformer.model", ["eager", "graph"], [1, 4])


def whisper(harness):
    return harness("whisper", "whisper_encoder.model", ["streaming", "offline"], [1, 4])


def talker(harness):
    return harness("talker", "talker.model", ["generate"], [1, 4])


def line_of(relative: str, text: str) -> int:
    lines = (FIXTURES / relative).read_text().splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, hits
    return hits[0]


@pytest.mark.parametrize("model", [codec, local, whisper, talker])
def test_stream_is_json_lines_from_start_to_end(harness, model):
    run = model(harness)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.lines and all(json.loads(line) for line in run.lines)  # nothing but JSON on stdout
    assert run.events[0]["event"] == "start" and run.events[-1]["event"] == "end"
    assert run.events[0]["device"] == "cpu"
    assert not run.of("error")
    assert len(run.of("path_done", ok=True)) == 4 if model is not talker else 2


@pytest.mark.parametrize("concurrency", [1, 4])
def test_codec_decoder_holds_4_44_mib_per_request(harness, concurrency):
    cache = codec(harness).one("cache", path="streaming", concurrency=concurrency)
    assert cache["class"] == "DynamicCache"
    assert cache["positions"] == 71 and cache["layers"] == 8
    assert cache["bytes_per_row"] == 2 * 8 * 16 * 64 * 71 * 4 == 4653056
    assert f"{cache['bytes_per_row'] / MIB:.2f}" == "4.44"
    assert cache["rows"] == concurrency and cache["objects"] == concurrency
    assert cache["alive_after_step"] is True and cache["in_capture"] is False
    # The window layer keeps a view of the last concatenation: storage is a
    # little larger than the logical window, never smaller.
    assert cache["bytes"] >= cache["bytes_per_row"] * concurrency
    assert cache["growth"] and cache["growth"] == sorted(cache["growth"])


def test_implicit_cache_is_attributed_to_the_models_call_line(harness):
    cache = codec(harness).one("cache", path="streaming", concurrency=1)
    assert cache["file"] == str(FIXTURES / "codec_decoder" / "model.py")
    assert cache["line"] == line_of("codec_decoder/model.py", "out = self.transformer(")
    assert cache["owner"] == "StreamingCodecDecoder"


def test_codec_stateless_path_allocates_and_declares_nothing(harness):
    run = codec(harness)
    assert not run.of("cache", path="stateless")
    for concurrency in (1, 4):
        assert run.one("declaration", path="stateless", concurrency=concurrency)["declared"] is False
        decl = run.one("declaration", path="streaming", concurrency=concurrency)
        assert decl["rows_driver"] == "MAX_NUM_SEQS" and decl["rows"] == concurrency
        assert decl["bytes_per_row"] == 4653056 and decl["total_bytes"] == 4653056 * concurrency


@pytest.mark.parametrize("path", ["eager", "graph"])
@pytest.mark.parametrize("concurrency", [1, 4])
def test_local_transformer_holds_704_kib_per_row(harness, path, concurrency):
    run = local(harness)
    cache = run.one("cache", path=path, concurrency=concurrency)
    assert cache["bytes_per_row"] == 720896 == 704 * 1024
    assert cache["positions"] == 11 and cache["layers"] == 16
    assert cache["rows"] == concurrency  # one allocation as wide as the batch
    assert cache["objects"] == 4  # one per call, steps = 4
    assert cache["bytes"] == 720896 * concurrency
    assert cache["alive_after_step"] is False
    assert cache["line"] == line_of("local_transformer/model.py", "cache = DynamicCache()")
    # No CUDA here: nothing captured, and no graph-pool declaration.
    assert not run.of("capture")
    (decl,) = run.of("declaration", path=path, concurrency=concurrency)
    assert decl["rows"] == concurrency and decl["bytes_per_row"] == 720896


@pytest.mark.parametrize("concurrency", [1, 4])
def test_whisper_encoder_holds_140_62_mib_per_session(harness, concurrency):
    run = whisper(harness)
    (cache,) = run.of("cache", path="streaming", concurrency=concurrency)  # inner caches folded in
    assert cache["class"] == "EncoderDecoderCache"
    assert cache["bytes_per_row"] == 2 * 24 * 16 * 64 * 1500 * 2
    assert f"{cache['bytes_per_row'] / MIB:.2f}" == "140.62"
    assert cache["positions"] == 1500 and cache["layers"] == 24
    assert cache["rows"] == 1 and cache["objects"] == concurrency  # one session at a time
    assert cache["bytes"] == cache["bytes_per_row"]
    decl = run.one("declaration", path="streaming", concurrency=concurrency)
    assert (decl["rows_driver"], decl["rows_fixed"], decl["rows"]) == ("FIXED", 1, 1)
    assert not run.of("cache", path="offline")


@pytest.mark.parametrize("concurrency", [1, 4])
def test_talker_holds_24_mib_serialized(harness, concurrency):
    run = talker(harness)
    cache = run.one("cache", path="generate", concurrency=concurrency)
    assert cache["class"] == "StaticCache" and cache["positions"] == 2048
    assert cache["bytes_per_row"] == 24 * MIB
    assert cache["rows"] == 1  # forward takes element [0]
    assert cache["owner"] == "MingAudioGenerator"  # a plain object, not a submodule
    decl = run.one("declaration", path="generate", concurrency=concurrency)
    assert decl["owner"] == "MingAudioGenerator"  # reached through the explicit hop
    # The declaring method's location (what RT003 names): the held class's, not the hop in MingTalker.
    from talker.model import MingAudioGenerator

    assert decl["file"] == str(FIXTURES / "talker" / "model.py")
    assert decl["line"] == MingAudioGenerator.model_local_kv_specs.__code__.co_firstlineno
    assert (decl["rows_driver"], decl["rows"], decl["total_bytes"]) == ("FIXED", 1, 24 * MIB)


@pytest.mark.parametrize("model", [codec, local, whisper, talker])
def test_correct_declarations_match_observed_bytes_per_row(harness, model):
    run = model(harness)
    for cache in run.of("cache"):
        decls = [d for d in run.of("declaration", path=cache["path"], concurrency=cache["concurrency"])
                 if d["declared"]]
        assert [d["bytes_per_row"] for d in decls] == [cache["bytes_per_row"]]


# ---- wrong-declaration variants: the evidence each verdict needs is in the stream

def test_unconditional_codec_declares_bytes_on_a_path_that_allocates_nothing(harness):
    run = harness("codec_wrong", "codec_decoder.wrong", ["stateless"], [4])
    assert not run.of("cache")
    decl = run.one("declaration", path="stateless", concurrency=4)
    assert decl["declared"] and decl["total_bytes"] == 4 * 4653056


def test_undeclared_codec_allocates_while_declaring_nothing(harness):
    run = harness("codec_missing", "codec_decoder.missing", ["streaming"], [1])
    assert run.one("cache", path="streaming", concurrency=1)["bytes_per_row"] == 4653056
    assert run.one("declaration", path="streaming", concurrency=1)["declared"] is False


def test_fixed_one_row_local_transformer_is_wider_at_concurrency(harness):
    run = harness("local_wrong", "local_transformer.wrong", ["eager"], [4])
    assert run.one("cache", path="eager", concurrency=4)["rows"] == 4
    decl = run.one("declaration", path="eager", concurrency=4)
    assert (decl["rows_driver"], decl["rows_fixed"], decl["rows"]) == ("FIXED", 1, 1)


@pytest.mark.parametrize("name,module,path", [
    ("whisper_wrong", "whisper_encoder.wrong", "streaming"),
    ("talker_wrong", "talker.wrong", "generate"),
])
def test_per_sequence_declarations_scale_while_observed_rows_stay_one(harness, name, module, path):
    run = harness(name, module, [path], [4])
    assert run.one("cache", path=path, concurrency=4)["rows"] == 1
    decl = run.one("declaration", path=path, concurrency=4)
    assert (decl["rows_driver"], decl["rows"]) == ("MAX_NUM_SEQS", 4)
