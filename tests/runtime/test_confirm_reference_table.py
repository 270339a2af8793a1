"""End to end: `kvlint confirm` boots the four wrong-declaration fixture models of the
reference table and reproduces its per-row figures (4.44 MiB, 704 KiB, 140.62 MiB,
24.00 MiB) with the right verdicts, from a findings file like `kvlint check` writes."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "runtime" / "fixtures"
MIB = 1024 * 1024


def kvlint_binary() -> Path:
    configured = os.environ.get("KVLINT_BINARY")
    return Path(configured) if configured else REPO / "build" / "kvlint"


def line_of(relative: str, text: str) -> int:
    lines = (FIXTURES / relative).read_text().splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, (relative, text, hits)
    return hits[0]


# (code, fixture file, owner, boot entry): one planted problem per reference model.
CASES = [
    ("KV301", "codec_decoder/wrong.py", "UnconditionalCodecDecoder", "codec_unconditional"),
    ("KV202", "local_transformer/wrong.py", "FixedRowLocalTransformer", "local_transformer_fixed_rows"),
    ("KV203", "whisper_encoder/wrong.py", "PerSequenceWhisperEncoder", "whisper_encoder_per_seq"),
    ("KV203", "talker/wrong.py", "PerSequenceTalker", "talker_per_seq"),
]


def finding(code: str, relative: str, owner: str) -> Dict[str, Any]:
    line = line_of(relative, "def model_local_kv_specs")
    return {"code": code, "name": "", "severity": "error", "path": str(FIXTURES / relative), "line": line,
            "column": 5, "end_line": line, "end_column": 30, "owner": owner, "message": f"{code} on {owner}",
            "related": [], "fingerprint": ""}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Dict[str, Any]:
    binary = kvlint_binary()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.skip(f"kvlint binary not found at {binary} (build it, or set KVLINT_BINARY)")
    tmp = tmp_path_factory.mktemp("reference-table")
    # The shipped boot entries, with the interpreter running this test and an absolute python-path.
    text = (FIXTURES / "kvlint.toml").read_text()
    text = re.sub(r'(?m)^interpreter = ".*"$', f"interpreter = {json.dumps(sys.executable)}", text)
    text = text.replace('python-path = ["."]', f"python-path = [{json.dumps(str(FIXTURES))}]")
    (tmp / "kvlint.toml").write_text(text)
    findings = {"schema": "kvlint-findings", "version": 1, "tool": {"name": "kvlint", "version": "test"},
                "findings": [finding(code, rel, owner) for code, rel, owner, _ in CASES], "diagnostics": []}
    (tmp / "findings.json").write_text(json.dumps(findings))
    command = [str(binary), "confirm", "--config", str(tmp / "kvlint.toml"), "--findings",
               str(tmp / "findings.json"), "--format", "json", "--device", "cpu"]
    for *_, model in CASES:
        command += ["--model", model]
    env = dict(os.environ, KVLINT_RUNTIME_PYTHONPATH=str(REPO / "runtime" / "python"))
    proc = subprocess.run(command, cwd=tmp, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 1, f"exit {proc.returncode} (1: something confirmed)\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout)


def result_for(report: Dict[str, Any], code: str, owner: str) -> Dict[str, Any]:
    found = [r for r in report["results"] if r["code"] == code and r["owner"] == owner]
    assert len(found) == 1, [(r["code"], r["owner"]) for r in report["results"]]
    return found[0]


def test_every_reference_model_completes(report):
    assert sorted(m["name"] for m in report["models"]) == sorted(case[3] for case in CASES)
    for run in report["models"]:
        assert run["status"] == "complete", (run["name"], run["reason"])


def test_codec_decoder_unconditional_declaration_is_confirmed_at_4_44_mib(report):
    result = result_for(report, "KV301", "UnconditionalCodecDecoder")
    assert result["verdict"] == "confirmed", result["evidence"]
    assert result["evidence"]["path"] == "stateless"
    declared = result["evidence"]["declared"]
    assert declared["bytes_per_row"] == 4_653_056  # 2 x 8 x 16 x 64 x 71 x 4 B = 4.44 MiB
    assert f"{declared['bytes_per_row'] / MIB:.2f}" == "4.44"


def test_local_transformer_fixed_row_claim_is_confirmed_at_704_kib(report):
    result = result_for(report, "KV202", "FixedRowLocalTransformer")
    assert result["verdict"] == "confirmed", result["evidence"]
    observed, declared = result["evidence"]["observed"], result["evidence"]["declared"]
    assert observed["bytes_per_row"] == declared["bytes_per_row"] == 704 * 1024
    assert observed["rows"] > declared["rows_fixed"] == 1


@pytest.mark.parametrize("owner, per_row, shown", [
    ("PerSequenceWhisperEncoder", 147_456_000, "140.62"),  # 1500 positions, one per session
    ("PerSequenceTalker", 24 * MIB, "24.00"),               # StaticCache of 2048, serialized
])
def test_per_sequence_claims_on_serialized_caches_are_confirmed(report, owner, per_row, shown):
    result = result_for(report, "KV203", owner)
    assert result["verdict"] == "confirmed", result["evidence"]
    observed, declared = result["evidence"]["observed"], result["evidence"]["declared"]
    assert observed["rows"] == 1 and declared["rows_driver"] == "MAX_NUM_SEQS" and declared["rows"] > 1
    assert observed["bytes_per_row"] == declared["bytes_per_row"] == per_row
    assert f"{per_row / MIB:.2f}" == shown
