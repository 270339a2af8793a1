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


# The speech decoder laid out as LibTorch projects are (plugins/split_kv: the classes in a header,
# the methods in a .cpp, past keys and values as two members built empty and grown with torch::cat).
# `kvlint check` flags each member at its first construction and at its growth; the run must
# confirm all four from the one cache the host reports for the two members, in degraded mode and
# with a compile database, and give no RT001 beside them; the same for the prompt encoder's K and V,
# filled one line apart by its constructor and alive from the build on. The drafter's member of the same name,
# the decoder's last hidden state and the vocoder's overlap tail are look-alikes that must not
# confirm them.
SPLIT_KV = REPO / "tests" / "runtime_cpp" / "plugins" / "split_kv"
SPLIT_SOURCE = SPLIT_KV / "speech_decoder.cpp"
SPLIT_OWNERS = ["SpeechPipeline", "StreamingDecoder", "PromptEncoder", "Drafter", "Vocoder"]


def split_entry(name: str, paths: List[str]) -> str:
    plugin = required_env("KVLINT_PLUGIN_DIR") / "libsplit_kv.so"
    return (f"[runtime.models.{name}]\nplugin = \"{plugin}\"\nowners = {json.dumps(SPLIT_OWNERS)}\n"
            f"paths = {json.dumps(paths)}\ndevice = \"cpu\"\nconcurrency = [1, 3]\nsteps = 2\ntimeout = 60\n")


def split_findings(tmp: Path, full: bool) -> Dict[str, Any]:
    command = [str(required_env("KVLINT_BINARY")), "check", "--no-cache", "--exit-zero", "--format", "json",
               str(SPLIT_KV)]
    if full:
        from torch.utils.cpp_extension import include_paths
        flags = ["-std=c++17", f"-I{REPO / 'runtime' / 'include'}"] + [f"-I{p}" for p in include_paths()]
        database = [{"directory": str(SPLIT_KV), "file": str(SPLIT_KV / name),
                     "arguments": ["c++", *flags, "-c", str(SPLIT_KV / name)]}
                    for name in ("speech_decoder.cpp", "plugin.cpp")]
        (tmp / "compile_commands.json").write_text(json.dumps(database))
        command += ["-p", str(tmp)]
    proc = subprocess.run(command, cwd=tmp, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    data = json.loads(proc.stdout)
    degraded = [d for d in data["diagnostics"] if d["kind"] == "degraded"]
    assert bool(degraded) != full, data["diagnostics"]
    return data


def findings_json(findings: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {"schema": "kvlint-findings", "version": 1, "tool": {"name": "kvlint", "version": "test"},
            "findings": findings, "diagnostics": []}


def confirm_entries(tmp: Path, findings: Dict[str, Any], entries: str) -> Dict[str, Any]:
    (tmp / "kvlint.toml").write_text("[runtime]\ntolerance = 0.05\n\n" + entries)
    (tmp / "findings.json").write_text(json.dumps(findings))
    proc = subprocess.run([str(required_env("KVLINT_BINARY")), "confirm", "--config", str(tmp / "kvlint.toml"),
                           "--findings", str(tmp / "findings.json"), "--format", "json", "--all"],
                          cwd=tmp, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-4000:]
    return json.loads(proc.stdout)


def kv101_lines(findings: Dict[str, Any], owner: str) -> List[int]:
    return sorted(f["line"] for f in findings["findings"] if f["code"] == "KV101" and f["owner"] == owner)


@pytest.fixture(scope="module", params=["degraded", "compile_database"])
def split_run(request, tmp_path_factory) -> Dict[str, Any]:
    tmp = tmp_path_factory.mktemp(f"split-{request.param}")
    findings = split_findings(tmp, full=request.param == "compile_database")
    report = confirm_entries(tmp, findings, split_entry("speech", ["generate", "finish"]))
    # Only the path whose streams ended: the K/V is gone, the last hidden state and the tail stay.
    finished = confirm_entries(tmp, findings, split_entry("speech_finished", ["finish"]))
    return {"findings": findings, "report": report, "finished": finished}


def test_split_kv_static_findings_name_each_member_at_construction_and_growth(split_run):
    findings = split_run["findings"]
    expected = [line_of(SPLIT_SOURCE, text) for text in ("past_keys_ = torch::zeros", "past_values_ = torch::zeros",
                                                          "past_keys_ = torch::cat({past_keys_, k}",
                                                          "past_values_ = torch::cat")]
    assert kv101_lines(findings, "StreamingDecoder") == sorted(expected), findings["findings"]
    assert kv101_lines(findings, "PromptEncoder") == [line_of(SPLIT_SOURCE, "k_cache_ = torch::zeros"),
                                                      line_of(SPLIT_SOURCE, "v_cache_ = torch::zeros")]
    assert kv101_lines(findings, "Drafter") == [line_of(SPLIT_SOURCE, "past_keys_ = torch::cat({past_keys_, hidden")]
    members = {(f["line"], f.get("member")) for f in findings["findings"] if f["owner"] == "StreamingDecoder"}
    assert {m for _, m in members} == {"past_keys_", "past_values_"}, members


def test_split_kv_is_one_cache_naming_both_members_and_every_line(split_run):
    [speech] = [m for m in split_run["report"]["models"] if m["name"] == "speech"]
    assert speech["status"] == "complete", speech
    kv = [c for c in speech["observed"]["caches"]
          if c["path"] == "generate" and c["concurrency"] == 3 and c["owner"] == "StreamingDecoder"
          and {m["name"] for m in c.get("members", [])} == {"past_keys_", "past_values_"}]
    assert len(kv) == 1, speech["observed"]["caches"]
    [cache] = kv
    # [layers 4, rows 3, kv_heads 2, positions 2, head_dim 64] float32, K and V: 16 KiB per row.
    assert cache["rows"] == 3 and cache["positions"] == 2 and cache["layers"] == 4
    assert cache["bytes_per_row"] == 2 * 4 * 2 * 2 * 64 * 4
    chain_lines = {f["line"] for f in cache["chain"] if Path(f["file"]).resolve() == SPLIT_SOURCE.resolve()}
    assert {line_of(SPLIT_SOURCE, "past_keys_ = torch::cat({past_keys_, k}"),
            line_of(SPLIT_SOURCE, "past_values_ = torch::cat")} <= chain_lines, cache["chain"]
    # The last hidden state is a member of its own, not folded into the K/V.
    others = [c for c in speech["observed"]["caches"] if c["path"] == "generate" and c["concurrency"] == 3
              and c is not cache and c["owner"] == "StreamingDecoder"]
    assert [[m["name"] for m in c.get("members", [])] for c in others] == [["last_hidden_"]], others


def test_split_kv_every_decoder_kv101_is_confirmed_and_none_is_an_rt001(split_run):
    report = split_run["report"]
    decoder = [r for r in report["results"] if r["code"] == "KV101" and r["owner"] == "StreamingDecoder"]
    assert len(decoder) == 4
    for result in decoder:
        assert result["verdict"] == "confirmed", result
        observed = result["evidence"]["observed"]
        assert result["evidence"]["concurrency"] == 3 and observed["rows"] == 3, result["evidence"]
        assert observed["bytes_per_row"] == 8 * 1024, result["evidence"]
    prompt = [r for r in report["results"] if r["code"] == "KV101" and r["owner"] == "PromptEncoder"]
    assert len(prompt) == 2
    for result in prompt:  # [layers 4, rows 1, kv_heads 2, positions 16, head_dim 64] float32, K and V
        assert result["verdict"] == "confirmed", result
        assert result["evidence"]["path"] == "build", result["evidence"]
        assert result["evidence"]["observed"]["rows"] == 1, result["evidence"]
        assert result["evidence"]["observed"]["bytes_per_row"] == 2 * 4 * 2 * 16 * 64 * 4, result["evidence"]
    decoder_lines = {r["line"] for r in decoder + prompt}
    rt001 = [r for r in report["runtime_findings"] if r["code"] == "RT001"]
    assert not [r for r in rt001 if r["owner"] in ("StreamingDecoder", "PromptEncoder", "Drafter")], rt001
    assert not [r for r in rt001 if Path(r["path"]).name == SPLIT_SOURCE.name and r["line"] in decoder_lines], rt001


def test_split_kv_another_classes_member_of_the_same_name_confirms_nothing(split_run):
    [drafter] = [r for r in split_run["report"]["results"] if r["code"] == "KV101" and r["owner"] == "Drafter"]
    # The drafter never runs: the decoder's past_keys_ and the vocoder's tail are not its cache.
    assert drafter["verdict"] == "refuted", drafter
    assert drafter["evidence"].get("observed") is None, drafter


def test_split_kv_scratch_member_beside_freed_kv_confirms_no_kv101(split_run):
    finished = split_run["finished"]
    [run] = finished["models"]
    assert run["status"] == "complete", run
    held = {m["name"] for c in run["observed"]["caches"] for m in c.get("members", []) if c["path"] == "finish"}
    assert "last_hidden_" in held and not held & {"past_keys_", "past_values_"}, run["observed"]["caches"]
    for result in finished["results"]:
        if result["owner"] != "PromptEncoder":  # its K/V, built with the model, is alive
            assert result["verdict"] == "refuted", result


def test_cpp_rows_above_the_declared_rows_are_rt004_without_a_static_finding(tmp_path):
    # The example's per-request map declared FIXED rows_fixed=1, with no KV202 to leave it to.
    plugins = required_env("KVLINT_PLUGIN_DIR")
    (tmp_path / "kvlint.toml").write_text(entry("cpp_talker", f"{plugins}/libcpp_talker.so", ["CppTalker"]))
    empty = {"schema": "kvlint-findings", "version": 1, "tool": {"name": "kvlint", "version": "test"},
             "findings": [], "diagnostics": []}
    (tmp_path / "findings.json").write_text(json.dumps(empty))
    proc = subprocess.run([str(required_env("KVLINT_BINARY")), "confirm", "--config", str(tmp_path / "kvlint.toml"),
                           "--findings", str(tmp_path / "findings.json"), "--format", "json", "--all"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    [rt004] = [r for r in report["runtime_findings"] if r["code"] == "RT004"]
    assert rt004["owner"] == "CppTalker" and rt004["line"] == line_of(EXAMPLE, "auto kv = torch::zeros(shape")
    assert rt004["evidence"]["concurrency"] == 4 and rt004["evidence"]["observed"]["rows"] == 4
    assert rt004["evidence"]["declared"]["rows"] == 1


# The ASR decoder laid out as LibTorch code around a TorchScript model is (plugins/owned_decoder): a
# plain class, not a torch::nn::Module, in a header + .cpp, owned by the engine through a
# std::unique_ptr, with past_k_ / past_v_ members (names outside the K/V vocabulary) written from its
# forward's outputs. Nothing in the plugin tells the host where the K/V is. It declares one row
# (FIXED rows_fixed=1) and serves every stream of a batch in it.
OWNED = REPO / "tests" / "runtime_cpp" / "plugins" / "owned_decoder"
OWNED_SOURCE = OWNED / "asr_decoder.cpp"
# K and V, [layers 4, rows, kv_heads 2, positions 16, head_dim 32] float32: 32 KiB per row.
OWNED_KV_PER_ROW = 2 * 4 * 2 * 16 * 32 * 4


def owned_confirm(tmp: Path, findings: List[Dict[str, Any]]) -> Dict[str, Any]:
    plugins = required_env("KVLINT_PLUGIN_DIR")
    report = confirm_entries(tmp, findings_json(findings),
                             entry("asr", f"{plugins}/libowned_decoder.so", ["AsrEngine", "Decoder"]))
    assert model(report, "asr")["status"] == "complete", model(report, "asr")
    return report


def owned_kv(report: Dict[str, Any], concurrency: int) -> Dict[str, Any]:
    kv = [c for c in caches(report, "asr", concurrency)
          if {m["name"] for m in c.get("members", [])} == {"past_k_", "past_v_"}]
    assert len(kv) == 1, caches(report, "asr", concurrency)
    return kv[0]


@pytest.mark.parametrize("concurrency", [1, 4])
def test_plain_class_k_and_v_members_are_one_observed_cache_with_bytes_per_row(tmp_path, concurrency):
    report = owned_confirm(tmp_path, [])
    cache = owned_kv(report, concurrency)
    assert cache["owner"] == "Decoder" and {m["owner"] for m in cache["members"]} == {"Decoder"}
    assert cache["rows"] == concurrency and cache["positions"] == 16 and cache["layers"] == 4
    assert cache["bytes_per_row"] == OWNED_KV_PER_ROW
    # The last hidden state, 2-D, is a member of its own beside the K/V.
    others = [[m["name"] for m in c.get("members", [])] for c in caches(report, "asr", concurrency)
              if c is not cache and c["owner"] == "Decoder"]
    assert others == [["last_hidden_"]], caches(report, "asr", concurrency)


def test_plain_class_rows_above_its_declared_rows_are_rt004_on_its_members_cache(tmp_path):
    report = owned_confirm(tmp_path, [])
    rt004 = [r for r in report["runtime_findings"] if r["code"] == "RT004"]
    assert len(rt004) == 1, report["runtime_findings"]
    [drift] = rt004
    assert drift["owner"] == "Decoder" and drift["evidence"]["concurrency"] == 4
    assert drift["evidence"]["observed"]["rows"] == 4
    assert drift["evidence"]["observed"]["bytes_per_row"] == OWNED_KV_PER_ROW
    assert drift["evidence"]["declared"]["rows"] == 1 and drift["evidence"]["declared"]["name"] == "asr_decoder_kv"
    # K and V together are the declared bytes per row: no drift of bytes, no second cache.
    assert not [r for r in report["runtime_findings"]
                if r["code"] == "RT002" and r["owner"] == "Decoder"], report["runtime_findings"]


def test_finding_naming_the_member_matches_its_cache_after_an_edit_moved_its_line(tmp_path):
    # The findings come from a revision edited since the plugin was built: the KV202 on past_v_
    # now sits on the line where the built plugin allocates last_hidden_.
    moved = line_of(OWNED_SOURCE, "last_hidden_ = torch::zeros")
    finding = {"code": "KV202", "name": "unsupported-fixed-row-claim", "severity": "error",
               "path": str(OWNED_SOURCE), "line": moved, "column": 3, "end_line": moved, "end_column": 40,
               "owner": "Decoder", "member": "past_v_", "message": "per-stream K/V declared FIXED",
               "fingerprint": "", "related": []}
    report = owned_confirm(tmp_path, [finding])
    [result] = [r for r in report["results"] if r["code"] == "KV202"]
    assert result["verdict"] == "confirmed", result
    observed = result["evidence"]["observed"]
    assert observed["rows"] == 4 and observed["bytes_per_row"] == OWNED_KV_PER_ROW, result["evidence"]


# The stream pool laid out as LibTorch serving code keeps per-stream K/V (plugins/stream_pool): one
# StreamState struct per open stream with buf_k / buf_v, held by the pool in a
# std::vector<std::unique_ptr<StreamState>>, and a drafter held by value with past_key_ / past_value_;
# keys are wider than values (a rotary part rides with each key), so K and V never share a shape.
# It declares one row for the streams' K/V (FIXED rows_fixed=1) and keeps one per open stream; the
# drafter's one row is declared right. Built with `declare = 0` it declares nothing, and the KV101s
# below (written here as the C++ front end words a member's finding: its owner and member) must each
# find their cache: at the header's member line, at the .cpp's allocation line, and on the holder's
# container member (`streams_` of StreamPool, as the front end names K/V kept in a container).
POOL = REPO / "tests" / "runtime_cpp" / "plugins" / "stream_pool"
POOL_OWNERS = ["StreamEngine", "StreamPool", "StreamState", "Drafter"]
# K [layers 2, 1, kv_heads 2, positions 8, 48] + V [..., 16] float32 per stream; the drafter has 1 layer.
POOL_KV_PER_ROW = 2 * 2 * 8 * (48 + 16) * 4
DRAFTER_KV_PER_ROW = 1 * 2 * 8 * (48 + 16) * 4
POOL_FINDINGS = [
    ("stream_pool.h", "torch::Tensor buf_k;", "StreamState", "buf_k"),
    ("stream_pool.cpp", "state->buf_v = torch::zeros(", "StreamState", "buf_v"),
    ("stream_pool.cpp", "streams_.push_back(", "StreamPool", "streams_"),
    ("stream_pool.h", "torch::Tensor past_key_;", "Drafter", "past_key_"),
    ("stream_pool.cpp", "torch::zeros({1, 1, config_.num_key_value_heads, config_.max_positions, config_.value_head",
     "Drafter", "past_value_"),
]


def member_kv101(path: Path, text: str, owner: str, member: str) -> Dict[str, Any]:
    line = line_of(path, text)
    return {"code": "KV101", "name": "undeclared-cache", "severity": "error", "path": str(path), "line": line,
            "column": 3, "end_line": line, "end_column": 40, "owner": owner, "member": member,
            "message": f"`{member}` holds K/V no declaration covers", "fingerprint": "", "related": []}


def pool_confirm(tmp: Path, findings: List[Dict[str, Any]], **config: Any) -> Dict[str, Any]:
    plugins = required_env("KVLINT_PLUGIN_DIR")
    report = confirm_entries(tmp, findings_json(findings),
                             entry("pool", f"{plugins}/libstream_pool.so", POOL_OWNERS, **config))
    assert model(report, "pool")["status"] == "complete", model(report, "pool")
    return report


@pytest.fixture(scope="module")
def pool_report(tmp_path_factory) -> Dict[str, Any]:
    return pool_confirm(tmp_path_factory.mktemp("stream-pool"), [])


@pytest.fixture(scope="module")
def undeclared_pool_report(tmp_path_factory) -> Dict[str, Any]:
    findings = [member_kv101(POOL / name, text, owner, member) for name, text, owner, member in POOL_FINDINGS]
    return pool_confirm(tmp_path_factory.mktemp("stream-pool-undeclared"), findings, declare=0)


def pool_caches(report: Dict[str, Any], concurrency: int, members: set) -> List[Dict[str, Any]]:
    return [c for c in caches(report, "pool", concurrency) if {m["name"] for m in c.get("members", [])} == members]


@pytest.mark.parametrize("concurrency", [1, 4])
def test_struct_k_and_v_in_a_vector_are_one_cache_with_a_row_per_open_stream(pool_report, concurrency):
    found = pool_caches(pool_report, concurrency, {"buf_k", "buf_v"})
    assert len(found) == 1, caches(pool_report, "pool", concurrency)
    [cache] = found
    assert cache["owner"] == "StreamState" and {m["owner"] for m in cache["members"]} == {"StreamState"}
    assert cache["rows"] == concurrency and cache["positions"] == 8 and cache["layers"] == 2
    assert cache["bytes_per_row"] == POOL_KV_PER_ROW
    # The stream's last output (2-D) is a cache of its own, not folded into the K/V.
    others = [[m["name"] for m in c.get("members", [])] for c in caches(pool_report, "pool", concurrency)
              if c is not cache and c["owner"] == "StreamState"]
    assert others == [["hidden"]], caches(pool_report, "pool", concurrency)


@pytest.mark.parametrize("concurrency", [1, 4])
def test_k_and_v_members_of_two_shapes_are_one_cache_with_k_and_v_bytes_per_row(pool_report, concurrency):
    found = pool_caches(pool_report, concurrency, {"past_key_", "past_value_"})
    assert len(found) == 1, caches(pool_report, "pool", concurrency)
    [cache] = found
    assert cache["owner"] == "Drafter" and cache["rows"] == 1 and cache["layers"] == 1
    assert cache["bytes_per_row"] == DRAFTER_KV_PER_ROW
    # Declared right (drafter_kv, one row): no half of it is a cache of its own or a bytes drift.
    assert not [r for r in pool_report["runtime_findings"] if r["owner"] == "Drafter"], pool_report["runtime_findings"]


def test_rows_of_per_stream_structs_above_the_declared_rows_are_rt004(pool_report):
    rt004 = [r for r in pool_report["runtime_findings"] if r["code"] == "RT004"]
    assert len(rt004) == 1, pool_report["runtime_findings"]
    [drift] = rt004
    assert drift["owner"] == "StreamState" and drift["evidence"]["concurrency"] == 4
    assert drift["evidence"]["observed"]["rows"] == 4
    assert drift["evidence"]["observed"]["bytes_per_row"] == POOL_KV_PER_ROW
    assert drift["evidence"]["declared"]["name"] == "stream_kv" and drift["evidence"]["declared"]["rows"] == 1
    # K and V together are the declared bytes per row: no bytes drift for the streams.
    assert not [r for r in pool_report["runtime_findings"] if r["code"] == "RT002"], pool_report["runtime_findings"]


@pytest.mark.parametrize("name, text, owner, member", POOL_FINDINGS)
def test_kv101_on_the_member_allocation_or_holder_line_is_confirmed_by_its_members_cache(
        undeclared_pool_report, name, text, owner, member):
    [result] = [r for r in undeclared_pool_report["results"]
                if r["line"] == line_of(POOL / name, text) and Path(r["path"]).name == name]
    assert result["verdict"] == "confirmed", result
    observed = result["evidence"]["observed"]
    expected = ("Drafter", DRAFTER_KV_PER_ROW, 1) if owner == "Drafter" else ("StreamState", POOL_KV_PER_ROW, 4)
    assert (observed["owner"], observed["bytes_per_row"], observed["rows"]) == expected, result["evidence"]
    # The K/V the findings name is no RT001 of its own.
    rt001 = [r for r in undeclared_pool_report["runtime_findings"] if r["code"] == "RT001"
             and r["owner"] in ("StreamState", "Drafter")]
    assert not rt001, rt001
