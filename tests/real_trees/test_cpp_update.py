"""`check_cpp_real_trees.py --update` keeps the triage of findings it finds again: the lead
regenerates the findings of the C++ real trees after front-end merges and must not lose or
misplace a verdict. These tests run the update's matching and rendering on small inputs."""
from __future__ import annotations

import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_cpp_real_trees as cpp  # noqa: E402

SITES = [{"id": "attn", "kind": "real", "anchors": [
    {"path": "attn.h", "line": 10, "text": "k_cache_"},
    {"path": "attn.cpp", "line": 40, "text": "k_cache_ ="},
    {"path": "attn.cpp", "line": 41, "text": "v_cache_ ="}]}]


def finding(code: str, path: str, line: int, owner: str = "Attention") -> tuple[tuple, dict]:
    return (code, path, line), {"code": code, "path": path, "line": line, "owner": owner,
                                "message": f"{code} at {path}:{line}", "related": []}


def entry(code: str, path: str, line: int, site: str = "", owner: str = "Attention") -> dict:
    return {"code": code, "path": path, "line": line, "owner": owner, "site": site,
            "verdict": "true-problem", "reason": f"triaged at {path}:{line}"}


def test_same_line_keeps_its_triage():
    actual = dict([finding("KV101", "attn.cpp", 40)])
    carried = cpp.carry_triage(actual, [entry("KV101", "attn.cpp", 40, "attn")], SITES)
    assert carried[("KV101", "attn.cpp", 40)]["reason"] == "triaged at attn.cpp:40"


def test_a_finding_that_moved_within_its_file_keeps_the_owner_s_triage():
    actual = dict([finding("KV101", "model.cpp", 77)])
    carried = cpp.carry_triage(actual, [entry("KV101", "model.cpp", 70)], SITES)
    assert carried[("KV101", "model.cpp", 77)]["reason"] == "triaged at model.cpp:70"


def test_a_finding_that_moved_to_the_header_keeps_the_site_s_triage():
    actual = dict([finding("KV101", "attn.h", 10)])
    carried = cpp.carry_triage(actual, [entry("KV101", "attn.cpp", 40, "attn")], SITES)
    assert carried[("KV101", "attn.h", 10)]["reason"] == "triaged at attn.cpp:40"


def test_two_moved_findings_at_one_site_are_left_to_triage():
    actual = dict([finding("KV101", "attn.h", 10), finding("KV101", "attn.h", 11)])
    old = [entry("KV101", "attn.cpp", 40, "attn"), entry("KV101", "attn.cpp", 41, "attn")]
    carried = cpp.carry_triage(actual, old, SITES)
    assert ("KV101", "attn.h", 11) not in carried


def test_a_new_finding_beside_a_found_one_gets_no_verdict():
    actual = dict([finding("KV101", "attn.cpp", 40), finding("KV101", "attn.cpp", 41)])
    carried = cpp.carry_triage(actual, [entry("KV101", "attn.cpp", 40, "attn")], SITES)
    assert ("KV101", "attn.cpp", 41) not in carried


def test_another_code_never_takes_a_verdict():
    actual = dict([finding("KV103", "attn.cpp", 40)])
    assert cpp.carry_triage(actual, [entry("KV101", "attn.cpp", 40, "attn")], SITES) == {}


def test_rendered_findings_are_toml_with_the_site_and_the_kept_triage():
    actual = dict([finding("KV101", "attn.cpp", 41), finding("KV202", "other.cpp", 5, "Other")])
    text = cpp.render_findings(actual, [entry("KV101", "attn.cpp", 41, "attn")], SITES, 12,
                               {"degraded": 3})
    parsed = tomllib.loads("site = []\n" + text)
    assert parsed["result"] == {"files": 12, "diagnostics": {"degraded": 3}}
    first, second = parsed["finding"]
    assert (first["site"], first["verdict"], first["reason"]) == ("attn", "true-problem",
                                                                  "triaged at attn.cpp:41")
    assert (second["site"], second["verdict"], second["reason"]) == ("", "", "")


def test_a_finding_reaches_every_site_its_related_lines_anchor():
    sites = SITES + [{"id": "binding", "kind": "real", "anchors": [
        {"path": "binding.cpp", "line": 7, "text": "from_blob"}]}]
    _, f = finding("KV101", "attn.h", 10)
    f["related"] = [{"path": "binding.cpp", "line": 7, "message": "reads it as K/V"}]
    assert cpp.sites_of(f, sites) == ["attn", "binding"]
    assert cpp.site_of(f, sites) == "attn"
