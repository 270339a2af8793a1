"""End to end: `kvlint confirm examples/models --format json` boots the bundled
example models (examples/models/boot.py, [runtime] in examples/kvlint.toml) and
its verdicts are the ones a reviewer of those planted problems would give."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
MODELS = EXAMPLES / "models"


def kvlint_binary() -> Path:
    configured = os.environ.get("KVLINT_BINARY")
    return Path(configured) if configured else REPO / "build" / "kvlint"


def line_of(relative: str, text: str) -> int:
    lines = (MODELS / relative).read_text().splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, (relative, text, hits)
    return hits[0]


def config_for_this_interpreter(tmp_dir: Path) -> Path:
    """examples/kvlint.toml with the interpreter running this test and absolute python-path:
    the boot entries under test are the shipped ones, the venv is whichever runs pytest."""
    text = (EXAMPLES / "kvlint.toml").read_text()
    text, replaced = re.subn(r'(?m)^interpreter = ".*"$', f"interpreter = {json.dumps(sys.executable)}", text)
    assert replaced == 1, "examples/kvlint.toml: expected one [runtime] interpreter line"
    text = text.replace('python-path = ["models"]', f"python-path = [{json.dumps(str(MODELS))}]")
    # The C++ example's plugin (runtime/build-host), relative to examples/ in the shipped file.
    text = text.replace('plugin = "../build/', f'plugin = "{REPO}/build/')
    config = tmp_dir / "kvlint.toml"
    config.write_text(text)
    return config


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Dict[str, Any]:
    binary = kvlint_binary()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.skip(f"kvlint binary not found at {binary} (build it, or set KVLINT_BINARY)")
    config = config_for_this_interpreter(tmp_path_factory.mktemp("example-confirm"))
    env = dict(os.environ, KVLINT_RUNTIME_PYTHONPATH=str(REPO / "runtime" / "python"))
    proc = subprocess.run([str(binary), "confirm", "examples/models", "--config", str(config), "--format", "json"],
                          cwd=REPO, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 1, f"exit {proc.returncode} (1: something confirmed)\n{proc.stderr[-4000:]}"
    data = json.loads(proc.stdout)
    data["_stderr"] = proc.stderr
    return data


def results(report: Dict[str, Any], code: str, path: str) -> List[Dict[str, Any]]:
    return [r for r in report["results"] if r["code"] == code and r["path"] == f"examples/models/{path}"]


def one(report: Dict[str, Any], code: str, path: str) -> Dict[str, Any]:
    found = results(report, code, path)
    assert len(found) == 1, (code, path, [(r["code"], r["path"]) for r in report["results"]])
    return found[0]


def on_cuda(report: Dict[str, Any], model: str) -> bool:
    (run,) = [m for m in report["models"] if m["name"] == model]
    return (run["runtime"] or {}).get("device", "").startswith("cuda")


def test_every_example_model_boots_and_completes(report):
    models = {m["name"]: m for m in report["models"]}
    # cpp_talker is a C++ plugin, booted in the LibTorch host (runtime/build-host).
    assert sorted(models) == sorted(["codec_decoder", "cpp_talker", "local_transformer", "prompt_encoder", "talker"])
    for name, run in models.items():
        assert run["status"] == "complete", (name, run["reason"], run["process"]["stderr_tail"])
        assert run["observed"]["errors"] == [], (name, run["observed"]["errors"])
    # 11 Python + 4 C++ (cpp_talker's KV202; cosyvoice_cpp's three, which has no boot entry)
    assert report["summary"]["findings"] == 15


def test_codec_decoder_per_request_cache_is_wider_than_its_fixed_row(report):
    kv202 = one(report, "KV202", "qwen3_tts/codec_decoder.py")
    assert kv202["verdict"] == "confirmed", kv202["evidence"]
    evidence = kv202["evidence"]
    assert evidence["path"] == "streaming" and evidence["concurrency"] == 4
    assert evidence["observed"]["rows"] == 4 and evidence["observed"]["objects"] == 4
    assert evidence["observed"]["line"] == line_of("qwen3_tts/codec_decoder.py", "cache = DynamicCache(")
    assert evidence["declared"]["rows_driver"] == "FIXED" and evidence["declared"]["rows_fixed"] == 1
    # 2 x 4 layers x 8 kv-heads x 64 head-dim x 71 positions x 2 B: declared and observed agree.
    assert evidence["observed"]["bytes_per_row"] == evidence["declared"]["bytes_per_row"] == 581632


def test_codec_decoder_declares_on_the_stateless_path_that_allocates_nothing(report):
    kv301 = one(report, "KV301", "qwen3_tts/codec_decoder.py")
    assert kv301["verdict"] == "confirmed", kv301["evidence"]
    assert kv301["evidence"]["path"] == "stateless"
    assert kv301["evidence"]["declared"]["total_bytes"] > 0


def test_serialized_talker_stays_one_row_while_declaring_max_num_seqs(report):
    kv203 = one(report, "KV203", "ming/talker.py")
    assert kv203["verdict"] == "confirmed", kv203["evidence"]
    evidence = kv203["evidence"]
    assert evidence["concurrency"] == 4 and evidence["observed"]["rows"] == 1
    assert evidence["declared"]["rows_driver"] == "MAX_NUM_SEQS" and evidence["declared"]["rows"] == 4
    assert evidence["declared"]["owner"] == "MingAudioGenerator"  # reached by boot.py's hop


def test_prompt_encoder_implicit_cache_is_observed_at_the_call_line(report):
    kv102 = one(report, "KV102", "ming/prompt_encoder.py")
    assert kv102["verdict"] == "confirmed", kv102["evidence"]
    observed = kv102["evidence"]["observed"]
    assert observed["class"] == "DynamicCache" and observed["owner"] == "PromptEncoder"
    assert observed["line"] == line_of("ming/prompt_encoder.py", "use_cache=True")
    assert kv102["evidence"]["declared"] is None


def test_capture_under_enforce_eager_needs_cuda(report):
    kv303 = one(report, "KV303", "mimo_audio/local_transformer.py")
    if on_cuda(report, "local_transformer"):
        assert kv303["verdict"] == "confirmed", kv303["evidence"]
        assert kv303["evidence"]["path"] == "enforce_eager"
        assert kv303["evidence"]["capture"]["count"] == 8  # one per bucket
    else:
        assert kv303["verdict"] == "not-exercised", kv303["evidence"]
        assert "CUDA" in kv303["evidence"]["summary"]


def test_talker_static_cache_holds_more_positions_than_declared(report):
    kv402 = one(report, "KV402", "ming/talker.py")
    assert kv402["verdict"] == "confirmed", kv402["evidence"]
    assert kv402["evidence"]["observed"]["positions"] == 2048  # StaticCache(max_cache_len=2048)
    assert "declared capacity 1024" in kv402["evidence"]["summary"]


def test_unreachable_generator_is_reached_through_boot_hop(report):
    # talker.py alone never forwards MingAudioGenerator's specs (KV105, static); boot.py's
    # MingTalkerWithHop adds the hop, so the collector's walk at run time does reach it.
    kv105 = one(report, "KV105", "ming/talker.py")
    assert kv105["verdict"] == "refuted", kv105["evidence"]
    assert kv105["evidence"]["declared"]["owner"] == "MingAudioGenerator"


def test_static_only_rules_are_not_checked(report):
    static_only = [r for r in report["results"] if r["code"] == "KV403"]
    assert len(static_only) == 3
    assert {r["verdict"] for r in static_only} == {"not-checked"}


def test_graph_pool_is_measured_only_on_cuda(report):
    """KV103 on mimo_audio's LocalTransformer: its bucket captures keep 1 + 2 + ... + 128 = 255
    rows of 44 KiB, which only its per-call MAX_NUM_SEQS cache declares."""
    kv103 = [r for r in report["results"] if r["code"] == "KV103"]
    assert len(kv103) == 2  # cosyvoice_cpp's (no boot entry: not exercised) among them
    mimo = one(report, "KV103", "mimo_audio/local_transformer.py")
    if on_cuda(report, "local_transformer"):
        assert mimo["verdict"] == "confirmed", mimo["evidence"]
        assert mimo["evidence"]["observed"]["rows"] == 255
    else:
        assert mimo["verdict"] == "not-exercised", mimo["evidence"]
        assert "CUDA" in mimo["evidence"]["summary"]
    assert {r["verdict"] for r in kv103 if r is not mimo} == {"not-exercised"}


def test_only_runtime_finding_is_the_talker_capacity_drift(report):
    # KV402's 2048 vs 1024 positions, seen at runtime as bytes per row; nothing unflagged.
    (drift,) = report["runtime_findings"]
    assert drift["code"] == "RT002" and drift["owner"] == "MingAudioGenerator"
    assert drift["line"] == line_of("ming/talker.py", "cache = StaticCache(")
    assert drift["evidence"]["observed"]["bytes_per_row"] == 2 * drift["evidence"]["declared"]["bytes_per_row"]
    assert report["summary"]["runtime_findings"] == 1


def test_cpp_example_per_request_map_is_confirmed(report):
    """examples/models/cpp_talker keeps K/V per request in a std::unordered_map, declared FIXED."""
    kv202 = [r for r in report["results"] if r["code"] == "KV202" and r["owner"] == "CppTalker"]
    assert len(kv202) == 1, [(r["code"], r["owner"]) for r in report["results"]]
    assert kv202[0]["verdict"] == "confirmed", kv202[0]["evidence"]
    assert kv202[0]["evidence"]["observed"]["rows"] == 4
    assert kv202[0]["evidence"]["observed"]["bytes_per_row"] == 24 * 1024 * 1024
