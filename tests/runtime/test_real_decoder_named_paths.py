"""End to end on real code: the real Qwen3-TTS codec decoder of vllm-omni 0.30.0, booted as
tests/real_trees/runtime/real_boot/qwen3_tts_decoder.py boots it (async-chunk decode, no CUDA-graph
wrapper), by an entry whose paths a user named after what they do ("icl", "xvec") and which says
nothing of enforce_eager, gets the same verdicts and runtime findings as the project's own entry
(`qwen3_tts_code2wav_eager`, path "enforce_eager", marked `enforce-eager`), and confirms the
decoder's KV302: its per-request caches are measured while its collected declarations report 0.

Needs the wheel unpacked where tests/real_trees/check_real_tree.py puts it and an interpreter that
imports vllm_omni (runtime/setup-env tf5); skipped otherwise."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "tests" / "real_trees" / "runtime"
TREE = Path(os.environ.get("KVLINT_REAL_TREE", Path.home() / ".cache" / "kvlint" / "corpus" / "vllm-omni-0.30.0"))
DECODER = "vllm_omni/model_executor/models/qwen3_tts/tokenizer_12hz/modeling_qwen3_tts_tokenizer_v2.py"


def kvlint_binary() -> Path:
    configured = os.environ.get("KVLINT_BINARY")
    return Path(configured) if configured else REPO / "build" / "kvlint"


@pytest.fixture(scope="module")
def setting(tmp_path_factory) -> Dict[str, Any]:
    binary = kvlint_binary()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.skip(f"kvlint binary not found at {binary} (build it, or set KVLINT_BINARY)")
    if not (TREE / DECODER).is_file():
        pytest.skip(f"vllm-omni 0.30.0 is not unpacked at {TREE} (tests/real_trees/check_real_tree.py fetches it)")
    if importlib.util.find_spec("vllm") is None or importlib.util.find_spec("vllm_omni") is None:
        pytest.skip(f"{sys.executable} has no vllm and vllm_omni (runtime/setup-env tf5 installs them)")
    tmp = tmp_path_factory.mktemp("named-paths")
    check = subprocess.run([str(binary), "check", "vllm_omni/model_executor/models/qwen3_tts", "--format", "json",
                            "--exit-zero", "--cache-dir", str(tmp / "cache")], cwd=TREE, capture_output=True,
                           text=True, timeout=600)
    assert check.returncode == 0, check.stderr
    findings = tmp / "findings.json"
    findings.write_text(check.stdout)
    assert any(f["code"] == "KV302" for f in json.loads(check.stdout)["findings"])
    return {"binary": binary, "tmp": tmp, "findings": findings}


def confirm(setting: Dict[str, Any], name: str, paths: list[str], extra: str) -> Dict[str, Any]:
    """The project's entry for the decoder alone, with these paths (and `extra` keys)."""
    text = (REAL / "kvlint.toml").read_text()
    block = re.search(r"(?ms)^\[runtime\.models\.qwen3_tts_code2wav_eager\]\n(.*?)(?=^\[|\Z)", text).group(1)
    block = re.sub(r"(?m)^paths = .*$", f"paths = {json.dumps(paths)}", block)
    block = re.sub(r"(?m)^enforce-eager = .*\n", "", block)
    block = block.replace('python-path = ["."]', f"python-path = [{json.dumps(str(REAL))}]")
    config = setting["tmp"] / f"{name}.toml"
    config.write_text(f"[runtime]\ninterpreter = {json.dumps(sys.executable)}\n\n"
                      f"[runtime.models.{name}]\n{block}{extra}\n")
    out = setting["tmp"] / f"{name}.json"
    proc = subprocess.run([str(setting["binary"]), "confirm", "--findings", str(setting["findings"]), "--config",
                           str(config), "--format", "json", "-o", str(out)], cwd=TREE, capture_output=True,
                          text=True, timeout=900, env=dict(os.environ, KVLINT_REAL_TREE=str(TREE)))
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(out.read_text())


def booted(report: Dict[str, Any]) -> dict:
    return {(r["code"], r["path"], r["line"]): r["verdict"] for r in report["results"] if r["evidence"].get("model")}


def runtime_findings(report: Dict[str, Any]) -> set:
    return {(r["code"], r["path"], r["line"]) for r in report["runtime_findings"]}


def test_paths_named_freely_get_the_project_entry_s_verdicts_and_confirm_kv302(setting):
    own = confirm(setting, "project_entry", ["enforce_eager"], "enforce-eager = true\n")
    named = confirm(setting, "user_entry", ["icl", "xvec"], "")
    assert [m["status"] for m in own["models"] + named["models"]] == ["complete", "complete"]
    assert booted(named) == booted(own)
    kv302 = next(r for r in named["results"] if r["code"] == "KV302" and r["path"].endswith(DECODER))
    assert kv302["verdict"] == "confirmed", kv302["evidence"]
    assert kv302["evidence"]["path"] == "icl"
    assert kv302["evidence"]["collected_total_bytes"] == 0
    assert kv302["evidence"]["observed"]["bytes_per_row"] > 0
    assert runtime_findings(named) == runtime_findings(own)
