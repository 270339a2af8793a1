"""Runs the harness the way `kvlint confirm` does: one child process per entry,
JSON lines on stdout. Results are cached per entry so each model boots once."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "runtime" / "fixtures"
RUNTIME_PYTHON = REPO / "runtime" / "python"
MIB = 1024 * 1024

sys.path.insert(0, str(RUNTIME_PYTHON))
sys.path.insert(0, str(FIXTURES))


@dataclass
class HarnessRun:
    returncode: Optional[int]
    lines: List[str]  # raw stdout lines
    stderr: str
    events: List[Dict[str, Any]] = field(default_factory=list)  # the lines that parsed

    def of(self, event: str, **match: Any) -> List[Dict[str, Any]]:
        return [e for e in self.events if e.get("event") == event
                and all(e.get(k) == v for k, v in match.items())]

    def one(self, event: str, **match: Any) -> Dict[str, Any]:
        found = self.of(event, **match)
        assert len(found) == 1, f"expected one {event} {match}, got {found}\nstderr:\n{self.stderr[-3000:]}"
        return found[0]


def entry(name: str, module: str, paths: List[str], concurrency: List[int], **extra: Any) -> Dict[str, Any]:
    return {"name": name, "factory": f"{module}:build", "driver": f"{module}:drive", "paths": paths,
            "device": "cpu", "concurrency": concurrency, "steps": 4, "collector": "",
            "python_path": [str(FIXTURES)], **extra}


def child_env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(RUNTIME_PYTHON), str(FIXTURES)])
    env["OMP_NUM_THREADS"] = "1"
    return env


def _parse(lines: List[str]) -> List[Dict[str, Any]]:
    events = []
    for line in lines:
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    return events


def run_harness(spec: Dict[str, Any], timeout: float = 600) -> HarnessRun:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    try:
        proc = subprocess.run([sys.executable, "-m", "kvlint_runtime", "run", "--entry", handle.name],
                              capture_output=True, text=True, timeout=timeout, env=child_env())
    finally:
        os.unlink(handle.name)
    lines = proc.stdout.splitlines()
    return HarnessRun(proc.returncode, lines, proc.stderr, _parse(lines))


def run_until_started_then_kill(spec: Dict[str, Any], grace_s: float = 2.0) -> HarnessRun:
    """For the hanging child: wait for "start", let it run, then kill it as the host's timeout would."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    proc = subprocess.Popen([sys.executable, "-m", "kvlint_runtime", "run", "--entry", handle.name],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=child_env())
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if '"event":"start"' in line:
                break
        time.sleep(grace_s)
        still_running = proc.poll() is None
        proc.kill()
        rest, _ = proc.communicate(timeout=60)
        lines.extend(rest.splitlines())
    finally:
        os.unlink(handle.name)
    run = HarnessRun(proc.returncode, lines, "", _parse(lines))
    run.still_running_after_grace = still_running  # type: ignore[attr-defined]
    return run


_CACHE: Dict[str, HarnessRun] = {}


@pytest.fixture(scope="session")
def harness():
    """harness(name, module, paths, concurrency) -> HarnessRun, run once per name."""

    def get(name: str, module: str, paths: List[str], concurrency: List[int]) -> HarnessRun:
        if name not in _CACHE:
            _CACHE[name] = run_harness(entry(name, module, paths, concurrency))
        return _CACHE[name]

    return get
