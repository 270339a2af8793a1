"""End to end: `kvlint confirm` boots C++ model plugins in kvlint-model-host on CPU.

Run by the host project's ctest (runtime/host, test `cpp_host_confirm`), which sets
KVLINT_MODEL_HOST, KVLINT_PLUGIN_DIR and KVLINT_BINARY. One `kvlint confirm --all` run boots every
plugin, so the faulty ones are checked to leave the others' results intact.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

REPO = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024
EXAMPLE = REPO / "examples" / "models" / "cpp_talker" / "cpp_talker.cpp"
STATIC_TALKER = REPO / "tests" / "runtime_cpp" / "plugins" / "static_talker.cpp"
PHANTOM = REPO / "tests" / "runtime_cpp" / "plugins" / "phantom.cpp"


def required_env(name: str) -> Path:
    value = os.environ.get(name)
    assert value, f"{name} is not set (ctest in build/runtime-host sets it)"
    return Path(value)


def line_of(path: Path, text: str) -> int:
    hits = [i + 1 for i, line in enumerate(path.read_text().splitlines()) if text in line]
    assert len(hits) == 1, (path, text, hits)
    return hits[0]


def entry(name: str, plugin: str, owners: List[str], timeout: int = 60, **config: Any) -> str:
    lines = [f"[runtime.models.{name}]", f'plugin = "{plugin}"', f"owners = {json.dumps(owners)}",
             'paths = ["generate"]', 'device = "cpu"', "concurrency = [1, 4]", "steps = 2",
             f"timeout = {timeout}"]
    if config:
        lines.append("config = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in config.items()) + " }")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Dict[str, Any]:
    plugins = required_env("KVLINT_PLUGIN_DIR")
    binary = required_env("KVLINT_BINARY")
    assert binary.is_file(), f"kvlint binary not found at {binary} (scripts/setup builds it)"
    tmp = tmp_path_factory.mktemp("cpp-host")
    config = "\n".join([
        "[runtime]\ntolerance = 0.05\n",
        entry("static_talker", f"{plugins}/libstatic_talker.so", ["StaticTalker"]),
        entry("static_talker_wrong", f"{plugins}/libstatic_talker.so", ["StaticTalker"], declared_positions=1024),
        entry("cpp_talker", f"{plugins}/libcpp_talker.so", ["CppTalker"]),
        entry("phantom", f"{plugins}/libphantom.so", ["PhantomDrafter"]),
        entry("segfault", f"{plugins}/libfaulty_segfault.so", ["FaultyModel"]),
        entry("hang", f"{plugins}/libfaulty_hang.so", ["FaultyModel"], timeout=3),
        entry("no_entry", f"{plugins}/libfaulty_no_entry.so", ["FaultyModel"]),
        entry("other_abi", f"{plugins}/libfaulty_other_abi.so", ["FaultyModel"]),
        entry("missing_plugin", f"{plugins}/libdoes_not_exist.so", ["FaultyModel"]),
    ])
    (tmp / "kvlint.toml").write_text(config)
    # The static side of C++ sources is the C++ front end's; this test feeds the KV202 finding it
    # gives on the example (a per-request map declared FIXED) as a findings file.
    rows_line = line_of(EXAMPLE, ".rows = mlkv::RowDriver::Fixed")
    map_line = line_of(EXAMPLE, "std::unordered_map<std::int64_t, torch::Tensor> kv_cache_")
    finding = {"code": "KV202", "name": "unsupported-fixed-row-claim", "severity": "error", "path": str(EXAMPLE),
               "line": rows_line, "column": 52, "end_line": rows_line, "end_column": 80, "owner": "CppTalker",
               "message": "per-request map declared FIXED", "fingerprint": "",
               "related": [{"path": str(EXAMPLE), "line": map_line, "column": 3, "message": "cache kept per request"}]}
    findings = {"schema": "kvlint-findings", "version": 1, "tool": {"name": "kvlint", "version": "test"},
                "findings": [finding], "diagnostics": []}
    (tmp / "findings.json").write_text(json.dumps(findings))
    command = [str(binary), "confirm", "--config", str(tmp / "kvlint.toml"), "--findings", str(tmp / "findings.json"),
               "--format", "json", "--all"]
    proc = subprocess.run(command, cwd=tmp, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, f"exit {proc.returncode} (1: something confirmed)\n{proc.stderr[-4000:]}"
    data = json.loads(proc.stdout)
    # The text report of one model, for how a C++ model is introduced.
    text = subprocess.run(command[:-3] + ["--model", "static_talker_wrong"], cwd=tmp, capture_output=True,
                          text=True, timeout=120)
    data["_text"] = text.stdout
    return data


def model(report: Dict[str, Any], name: str) -> Dict[str, Any]:
    found = [m for m in report["models"] if m["name"] == name]
    assert len(found) == 1, [m["name"] for m in report["models"]]
    return found[0]


def caches(report: Dict[str, Any], name: str, concurrency: int) -> List[Dict[str, Any]]:
    return [c for c in model(report, name)["observed"]["caches"]
            if c["path"] == "generate" and c["concurrency"] == concurrency]


@pytest.mark.parametrize("concurrency", [1, 4])
def test_static_talker_is_24_mib_per_row_one_row_at_each_concurrency(report, concurrency):
    assert model(report, "static_talker")["status"] == "complete"
    [cache] = caches(report, "static_talker", concurrency)
    assert cache["owner"] == "StaticTalker"
    assert cache["bytes_per_row"] == 24 * MIB and cache["rows"] == 1
    assert cache["positions"] == 2048 and cache["layers"] == 24
    # Attributed to the line that allocated the registered k_cache buffer.
    assert Path(cache["file"]).resolve() == STATIC_TALKER.resolve()
    assert cache["line"] == line_of(STATIC_TALKER, 'register_buffer("k_cache"')
    [declared] = [d for d in model(report, "static_talker")["observed"]["declarations"]
                  if d["concurrency"] == concurrency]
    assert declared["owner"] == "StaticTalker" and declared["name"] == "talker_static_kv"
    assert declared["bytes_per_row"] == 24 * MIB and declared["rows"] == 1 and declared["rows_driver"] == "FIXED"


def test_right_declaration_gives_no_runtime_finding(report):
    assert not [r for r in report["runtime_findings"] if r["evidence"]["model"] == "static_talker"]


def test_wrong_declaration_gives_rt002(report):
    drift = [r for r in report["runtime_findings"] if r["code"] == "RT002"]
    assert len(drift) == 1, report["runtime_findings"]
    assert drift[0]["owner"] == "StaticTalker" and drift[0]["evidence"]["model"] == "static_talker_wrong"
    assert drift[0]["evidence"]["declared"]["bytes_per_row"] == 12 * MIB
    assert drift[0]["evidence"]["observed"]["bytes_per_row"] == 24 * MIB


def test_per_request_map_declared_fixed_is_a_confirmed_kv202(report):
    [result] = [r for r in report["results"] if r["code"] == "KV202"]
    assert result["verdict"] == "confirmed", result["evidence"]
    evidence = result["evidence"]
    assert evidence["model"] == "cpp_talker" and evidence["concurrency"] == 4
    assert evidence["observed"]["rows"] == 4 and evidence["observed"]["bytes_per_row"] == 24 * MIB
    # The allocator attributes the live bytes to the torch::zeros line inside CppTalker::kv_for.
    assert Path(evidence["observed"]["file"]).resolve() == EXAMPLE.resolve()
    assert evidence["observed"]["line"] == line_of(EXAMPLE, "auto kv = torch::zeros(shape")
    [one] = caches(report, "cpp_talker", 1)
    assert one["rows"] == 1 and one["class"] == "allocation"


def test_phantom_declaration_gives_rt003_at_the_declaring_line(report):
    # The spec's location comes from the header (__builtin_FILE/__builtin_LINE at the
    # spec_from_config call) through the plugin contract to the host's declaration events.
    phantom = [r for r in report["runtime_findings"] if r["code"] == "RT003"]
    assert len(phantom) == 1, report["runtime_findings"]
    assert phantom[0]["owner"] == "PhantomDrafter" and phantom[0]["evidence"]["model"] == "phantom"
    assert Path(phantom[0]["path"]).resolve() == PHANTOM.resolve()
    assert phantom[0]["line"] == line_of(PHANTOM, "// the declaring line")


@pytest.mark.parametrize("name, reason", [
    ("segfault", "SIGSEGV"),
    ("hang", "timed out after 3"),
    ("no_entry", "kvlint_model_create_v1"),
    ("other_abi", "_GLIBCXX_USE_CXX11_ABI=0"),
    ("missing_plugin", "cannot load plugin"),
])
def test_faulty_plugin_is_inconclusive_with_its_reason(report, name, reason):
    run = model(report, name)
    assert run["status"] == "inconclusive"
    assert reason in run["reason"], run["reason"]


def test_faults_keep_the_other_models_results(report):
    statuses = {m["name"]: m["status"] for m in report["models"]}
    assert statuses["static_talker"] == statuses["static_talker_wrong"] == statuses["cpp_talker"] == "complete"
    assert statuses["phantom"] == "complete"
    assert report["summary"]["by_verdict"].get("confirmed") == 1


def torch_has_cuda_side() -> bool:
    import torch  # the interpreter ctest runs is the one the host was built against
    return (Path(torch.__file__).parent / "lib" / "libtorch_cuda.so").is_file()


def test_host_built_with_cuda_boots_on_cpu():
    # A CUDA wheel gives the host its CUDA side (cuda_device.cpp); it must still boot on CPU.
    host = required_env("KVLINT_MODEL_HOST")
    plugin = required_env("KVLINT_PLUGIN_DIR") / "libstatic_talker.so"
    proc = subprocess.run([str(host), "--name", "t", "--plugin", str(plugin), "--device", "cpu", "--path", "generate",
                           "--steps", "1"], capture_output=True, text=True, timeout=120)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    [start] = [e for e in events if e["event"] == "start"]
    assert start["device"] == "cpu" and start["cuda_support"] == torch_has_cuda_side()
    assert [e["ok"] for e in events if e["event"] == "path_done"] == [True]
    assert events[-1]["event"] == "end" and proc.returncode == 0


def test_device_cuda_without_a_gpu_is_inconclusive_with_its_reason(tmp_path):
    import torch
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: runtime/gpu-check covers --device cuda")
    plugins = required_env("KVLINT_PLUGIN_DIR")
    (tmp_path / "kvlint.toml").write_text(entry("static_talker", f"{plugins}/libstatic_talker.so", ["StaticTalker"]))
    proc = subprocess.run([str(required_env("KVLINT_BINARY")), "confirm", "--config", str(tmp_path / "kvlint.toml"),
                           "--all", "--device", "cuda", "--format", "json"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    [run] = json.loads(proc.stdout)["models"]
    assert run["status"] == "inconclusive", run
    expected = ("torch::cuda::is_available() is false" if torch_has_cuda_side()
                else "built without CUDA support")
    assert "device 'cuda' requested but" in run["reason"] and expected in run["reason"], run["reason"]


def test_text_report_names_the_cpp_runtime(report):
    assert "model static_talker_wrong: complete (C++ plugin, LibTorch " in report["_text"], report["_text"]
    assert "RT002 error declared-bytes-drift" in report["_text"]
