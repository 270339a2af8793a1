"""End to end: KV302's verdict comes from what the run observed, not from how the entry names its
paths. A decoder whose declaration is gated on a CUDA-graph wrapper that enforce_eager never attaches
(fixtures/codec_decoder/wrapper_gated.py) is booted with paths named after what they do ("icl",
"xvec"); the per-request caches it allocates while its declaration reports nothing confirm the
finding, as they do for an entry whose path is named "enforce_eager" and marked `enforce-eager`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "runtime" / "fixtures"
MODEL = FIXTURES / "codec_decoder" / "wrapper_gated.py"


def kvlint_binary() -> Path:
    configured = os.environ.get("KVLINT_BINARY")
    return Path(configured) if configured else REPO / "build" / "kvlint"


def entry(name: str, paths: list[str], extra: str = "") -> str:
    return f"""
[runtime.models.{name}]
factory = "codec_decoder.wrapper_gated:build"
driver = "codec_decoder.wrapper_gated:drive"
owners = ["StreamingCodecDecoder", "WrapperGatedCodecDecoder"]
paths = {json.dumps(paths)}
{extra}
device = "cpu"
concurrency = [1, 4]
steps = 3
timeout = 300
env = {{ OMP_NUM_THREADS = "1" }}
python-path = [{json.dumps(str(FIXTURES))}]
"""


def confirm(tmp: Path, name: str, body: str) -> Dict[str, Any]:
    binary = kvlint_binary()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.skip(f"kvlint binary not found at {binary} (build it, or set KVLINT_BINARY)")
    config = tmp / f"{name}.toml"
    config.write_text(f"[runtime]\ninterpreter = {json.dumps(sys.executable)}\n" + body)
    line = next(i + 1 for i, text in enumerate(MODEL.read_text().splitlines()) if "def model_local_kv_specs" in text)
    findings = {"schema": "kvlint-findings", "version": 1, "tool": {"name": "kvlint", "version": "test"},
                "findings": [{"code": "KV302", "name": "declaration-on-graph-wrapper", "severity": "error",
                              "path": str(MODEL), "line": line, "column": 5, "end_line": line, "end_column": 30,
                              "owner": "WrapperGatedCodecDecoder", "message": "KV302", "related": [],
                              "fingerprint": ""}]}
    (tmp / "findings.json").write_text(json.dumps(findings))
    out = tmp / f"{name}.json"
    proc = subprocess.run([str(binary), "confirm", "--findings", str(tmp / "findings.json"), "--config", str(config),
                           "--format", "json", "-o", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(out.read_text())


def test_freely_named_paths_confirm_kv302_as_the_marked_enforce_eager_path_does(tmp_path):
    named = confirm(tmp_path, "named", entry("codec_modes", ["icl", "xvec"]))
    marked = confirm(tmp_path, "marked", entry("codec_eager", ["enforce_eager"], 'enforce-eager = true'))
    [free] = named["results"]
    [own] = marked["results"]
    assert free["verdict"] == own["verdict"] == "confirmed", (free["evidence"], own["evidence"])
    assert free["evidence"]["path"] == "icl"
    assert free["evidence"]["collected_total_bytes"] == 0
    assert free["evidence"]["observed"]["bytes_per_row"] == own["evidence"]["observed"]["bytes_per_row"] > 0
    # The confirmed KV302 speaks for the caches: no runtime-only finding repeats it, in either run.
    assert named["runtime_findings"] == marked["runtime_findings"] == []


def test_a_path_named_eager_but_not_marked_refutes_nothing(tmp_path):
    # The wrapper attached (a graph deployment on the CPU): the declaration covers the caches. The
    # path's name says "eager", the entry does not: no refutation from a name.
    body = entry("codec_graph", ["eager"]).replace(
        'driver = "codec_decoder.wrapper_gated:drive"', 'driver = "codec_decoder.wrapper_gated:drive_with_wrapper"')
    report = confirm(tmp_path, "graph", body)
    [result] = report["results"]
    assert result["verdict"] == "not-exercised", result["evidence"]
    marked = confirm(tmp_path, "graph_marked", body.replace('paths = ["eager"]', 'paths = ["eager"]\nenforce-eager = true'))
    assert marked["results"][0]["verdict"] == "refuted", marked["results"][0]["evidence"]
