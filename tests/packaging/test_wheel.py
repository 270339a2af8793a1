"""`pip wheel .` in a fresh virtual environment, installed and used from
outside the source tree, as a user who never cloned kvlint would."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from conftest import REPO, clean_env, run

# ldd names of the C and C++ runtime: what every Linux system has.
RUNTIME_LIBRARIES = {
    "linux-vdso.so.1",
    "libc.so.6",
    "libm.so.6",
    "libstdc++.so.6",
    "libgcc_s.so.1",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
}

UNDECLARED = """\
from torch import nn
from transformers import DynamicCache


class StreamingCodecDecoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self._caches = {}

    def decode_chunk(self, request_id, codes):
        return self._caches.setdefault(request_id, DynamicCache())
"""


@pytest.fixture(scope="session")
def wheel(fresh_venv, tmp_path_factory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    pip = fresh_venv / "bin" / "pip"
    run([pip, "wheel", "--no-deps", "--quiet", "-w", dist, REPO], cwd=dist, env=clean_env())
    (built,) = dist.glob("kvlint-*.whl")
    print(f"wheel {built.name}: {built.stat().st_size / 1e6:.2f} MB")
    return built


@pytest.fixture(scope="session")
def installed(wheel, fresh_venv) -> Path:
    """The fresh venv with the wheel installed; returns its bin directory."""
    run([fresh_venv / "bin" / "pip", "install", "--no-deps", "--quiet", wheel], cwd=wheel.parent, env=clean_env())
    return fresh_venv / "bin"


@pytest.fixture()
def user_tree(tmp_path) -> Path:
    """A model tree far from the checkout, with one undeclared cache."""
    tree = tmp_path / "user_models"
    tree.mkdir()
    (tree / "codec.py").write_text(UNDECLARED)
    return tree


def on_path(bin_dir: Path) -> dict:
    return clean_env(PATH=f"{bin_dir}{os.pathsep}/usr/bin:/bin")


def test_wheel_holds_the_executable_and_the_harness(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert re.fullmatch(r"kvlint-[0-9.]+-py3-none-linux_\w+\.whl", wheel.name), wheel.name
    assert any(re.fullmatch(r"kvlint-[0-9.]+\.data/scripts/kvlint", n) for n in names), names
    for part in ("__init__.py", "__main__.py", "runtime/kvlint_runtime/__main__.py", "runtime/kvlint_runtime/harness.py"):
        assert f"kvlint/{part}" in names, part
    assert not any("__pycache__" in n for n in names)


def test_installed_kvlint_checks_a_tree_outside_the_checkout(installed, user_tree):
    kvlint = shutil.which("kvlint", path=str(installed))
    assert kvlint == str(installed / "kvlint")
    found = run([kvlint, "check", "--no-cache", "--format", "json", "."], cwd=user_tree, env=on_path(installed), check=False)
    assert found.returncode == 1, found.stderr
    codes = [f["code"] for f in json.loads(found.stdout)["findings"]]
    assert codes == ["KV101"], found.stdout

    (user_tree / "codec.py").write_text(UNDECLARED.replace("DynamicCache())", "DynamicCache())  # kvlint: ignore[KV101] the engine's runner declares it"))
    clean = run([kvlint, "check", "--no-cache", "."], cwd=user_tree, env=on_path(installed), check=False)
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_installed_kvlint_lists_rules_and_confirm_help(installed, tmp_path):
    rules = run(["kvlint", "rules"], cwd=tmp_path, env=on_path(installed))
    assert "KV101" in rules.stdout and "KV904" in rules.stdout
    explain = run(["kvlint", "explain", "KV202"], cwd=tmp_path, env=on_path(installed))
    assert "## How to fix" in explain.stdout
    confirm_help = run(["kvlint", "confirm", "--help"], cwd=tmp_path, env=on_path(installed))
    assert "--findings" in confirm_help.stdout


def test_python_dash_m_kvlint_runs_the_installed_executable(installed, user_tree):
    python = installed / "python"
    version = run([python, "-m", "kvlint", "--version"], cwd=user_tree, env=clean_env(PATH="/usr/bin:/bin"))
    assert re.search(r"\b0\.\d+\.\d+\b", version.stdout + version.stderr)
    found = run([python, "-m", "kvlint", "check", "--no-cache", "codec.py"], cwd=user_tree, env=clean_env(PATH="/usr/bin:/bin"), check=False)
    assert found.returncode == 1 and "KV101" in found.stdout, found.stdout + found.stderr


def recording_interpreter(directory: Path, python: Path) -> Path:
    """An interpreter for `kvlint confirm` that records the PYTHONPATH it is
    given, then runs the harness with the venv's Python (which has no torch, so
    the model ends inconclusive: the harness's path is what is checked)."""
    script = directory / "record-python"
    script.write_text(f'#!/bin/sh\nprintf "%s" "$PYTHONPATH" > "{directory}/pythonpath"\nexec "{python}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.parametrize("launcher", ["executable", "python -m"])
def test_confirm_finds_the_harness_inside_the_installed_package(installed, user_tree, launcher):
    interpreter = recording_interpreter(user_tree.parent, installed / "python")
    (user_tree / "kvlint.toml").write_text(
        f"""[runtime]
interpreter = "{interpreter}"

[runtime.models.codec]
factory = "codec:build"
driver = "codec:drive"
owners = ["StreamingCodecDecoder"]
paths = ["streaming"]
device = "cpu"
concurrency = [1]
timeout = 60
"""
    )
    command = ["kvlint"] if launcher == "executable" else [installed / "python", "-m", "kvlint"]
    run([*command, "confirm", "--format", "json", "-o", "confirm.json", "."], cwd=user_tree, env=on_path(installed), check=False)
    harness_dir = Path((user_tree.parent / "pythonpath").read_text().split(os.pathsep)[0])
    site_packages = next((installed.parent / "lib").glob("python3*/site-packages"))
    assert harness_dir.resolve() == (site_packages / "kvlint" / "runtime").resolve()
    assert json.loads((user_tree / "confirm.json").read_text())  # a whole report, whatever the verdict


def test_installed_kvlint_needs_only_the_c_and_cxx_runtime(installed):
    ldd = run(["ldd", installed / "kvlint"], cwd=installed)
    print(ldd.stdout)
    needed = {line.split()[0].rsplit("/", 1)[-1] for line in ldd.stdout.splitlines() if line.strip()}
    assert needed - RUNTIME_LIBRARIES == set(), ldd.stdout
    assert not any("not found" in line for line in ldd.stdout.splitlines()), ldd.stdout


def test_a_missing_system_package_is_one_message_naming_it(tmp_path):
    """Configure as the wheel build does with fmt made unfindable: one error
    that names the Debian package, not CMake's search-path dump."""
    proc = run(
        ["cmake", "-S", REPO, "-B", tmp_path / "b", "-G", "Ninja", "-DSKBUILD=ON", "-DKVLINT_BUILD_TESTS=OFF",
         "-DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON"],
        cwd=tmp_path, env=clean_env(), check=False,
    )
    assert proc.returncode != 0
    errors = re.findall(r"CMake Error.*?(?=\n\S|\Z)", proc.stderr, re.S)
    assert len(errors) == 1, proc.stderr
    assert "libfmt-dev" in errors[0] and "apt-get install libfmt-dev" in " ".join(errors[0].split()), errors[0]
