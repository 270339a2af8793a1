"""Shared helpers for the packaging tests: the wheel (test_wheel.py) and the
pre-commit hook (test_precommit.py). They run real pip, scikit-build-core,
CMake, git and pre-commit; scripts/test runs them with the project's .venv
(scripts/setup pins pre-commit and pytest there)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Network blocked the way a developer's offline laptop or a sandboxed CI step
# sees it: no package index, and every proxy pointing at a closed port.
OFFLINE_ENV = {
    "PIP_NO_INDEX": "1",
    "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
    "http_proxy": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "no_proxy": "",
    "NO_PROXY": "",
}


def run(args, *, cwd, env=None, check=True, timeout=600) -> subprocess.CompletedProcess:
    """Runs a command, output captured as text; a failure shows it whole."""
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    if check and proc.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, args))} exited {proc.returncode}\n"
            f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
        )
    return proc


def clean_env(**extra: str) -> dict:
    """The environment without this checkout's own traces (no KVLINT_* overrides,
    no active virtual environment), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KVLINT_") and k != "VIRTUAL_ENV"}
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def fresh_venv(tmp_path_factory) -> Path:
    """A new virtual environment of the interpreter running the tests."""
    venv = tmp_path_factory.mktemp("venv") / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", venv], cwd=venv.parent)
    return venv
