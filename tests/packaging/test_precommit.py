"""The `kvlint` pre-commit hook (.pre-commit-hooks.yaml) with the real
pre-commit in a temporary git repository: `pre-commit try-repo` against a
snapshot of this checkout installs it, then real `git commit`s go through it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import OFFLINE_ENV, REPO, clean_env, run

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
FIXED_DATE = "2026-01-01T00:00:00Z"

BASE = """\
from torch import nn
from transformers import DynamicCache

from vllm_omni.model_local_kv import ModelLocalKVScope, RowDriver, spec_from_hf_config


class CodecDecoderBase(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config

    def model_local_kv_specs(self):
        return [
            spec_from_hf_config(
                self.config,
                name="codec_decoder",
                physical_capacity_positions=self.config.sliding_window - 1,
                capacity_source="sliding_window - 1",
                scope=ModelLocalKVScope.REQUEST,
                dtype=self.config.torch_dtype,
                rows=RowDriver.MAX_NUM_SEQS,
            )
        ]


class Scratchpad(nn.Module):
    # Committed with a finding of its own: the hook must not report it when
    # this file is not part of the commit.
    def __init__(self):
        super().__init__()
        self._caches = {}

    def step(self, request_id):
        return self._caches.setdefault(request_id, DynamicCache())
"""

# Covered only by the declaration it inherits from base.py.
INHERITING = """\
from transformers import DynamicCache

from .base import CodecDecoderBase


class Qwen3TTSCodecDecoder(CodecDecoderBase):
    def __init__(self, config):
        super().__init__(config)
        self._caches = {}

    def decode_chunk(self, request_id, codes):
        if request_id not in self._caches:
            self._caches[request_id] = DynamicCache()
        return codes
"""

UNDECLARED = """\
from torch import nn
from transformers import DynamicCache


class Talker(nn.Module):
    def __init__(self, config):
        super().__init__()
        self._caches = {}

    def step(self, request_id):
        return self._caches.setdefault(request_id, DynamicCache())SUPPRESSION
"""


def undeclared(suppression: str = "") -> str:
    return UNDECLARED.replace("SUPPRESSION", suppression)


def git_env(**extra: str) -> dict:
    return clean_env(
        GIT_AUTHOR_NAME="kvlint test", GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="kvlint test", GIT_COMMITTER_EMAIL="test@example.invalid",
        GIT_AUTHOR_DATE=FIXED_DATE, GIT_COMMITTER_DATE=FIXED_DATE,
        GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", **extra,
    )


@pytest.fixture(scope="session")
def kvlint_snapshot(tmp_path_factory) -> tuple[Path, str]:
    """This checkout as it is now (tracked and untracked, not ignored files) in a
    repository of one commit, so the hook installed is the code under test even
    when it is not committed yet; fixed dates make the commit id stable."""
    snapshot = tmp_path_factory.mktemp("kvlint-src") / "kvlint"
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO).stdout
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file() or source.is_symlink():
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / name, follow_symlinks=False)
    env = git_env()
    run(["git", "init", "-q", "-b", "main"], cwd=snapshot, env=env)
    run(["git", "add", "-A"], cwd=snapshot, env=env)
    run(["git", "commit", "-q", "-m", "snapshot"], cwd=snapshot, env=env)
    return snapshot, run(["git", "rev-parse", "HEAD"], cwd=snapshot, env=env).stdout.strip()


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="session")
def user_repo(tmp_path_factory, kvlint_snapshot) -> Path:
    """A model repository whose base class (committed earlier) declares for its subclasses."""
    repo = tmp_path_factory.mktemp("user") / "models"
    (repo / "codec").mkdir(parents=True)
    (repo / "codec" / "__init__.py").write_text("")
    (repo / "codec" / "base.py").write_text(BASE)
    snapshot, rev = kvlint_snapshot
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {snapshot}\n    rev: {rev}\n    hooks:\n      - id: kvlint\n"
    )
    env = git_env()
    run(["git", "init", "-q", "-b", "main"], cwd=repo, env=env)
    run(["git", "add", "-A"], cwd=repo, env=env)
    run(["git", "commit", "-q", "-m", "base"], cwd=repo, env=env)
    return repo


def hook_env(home: Path, **extra: str) -> dict:
    return git_env(PRE_COMMIT_HOME=str(home), PATH=os.environ["PATH"], **extra)


def stage(repo: Path, name: str, text: str) -> None:
    (repo / name).write_text(text)
    run(["git", "add", name], cwd=repo, env=git_env())


def commit(repo: Path, env: dict) -> subprocess.CompletedProcess:
    return run(["git", "commit", "-m", "change"], cwd=repo, env=env, check=False)


def unstage_all(repo: Path) -> None:
    run(["git", "reset", "-q", "--hard", "HEAD"], cwd=repo, env=git_env())
    run(["git", "clean", "-qfdx"], cwd=repo, env=git_env())


def output(proc: subprocess.CompletedProcess) -> str:
    # Under `git commit` the hook's report goes to stderr; under pre-commit to stdout.
    return proc.stdout + proc.stderr


def test_try_repo_blocks_a_staged_undeclared_cache(user_repo, kvlint_snapshot, pre_commit_home):
    """`pre-commit try-repo` (a throw-away store: it builds kvlint every time)."""
    stage(user_repo, "codec/talker.py", undeclared())
    snapshot, rev = kvlint_snapshot
    tried = run([*PRE_COMMIT, "try-repo", snapshot, "kvlint", "--ref", rev], cwd=user_repo,
                env=hook_env(pre_commit_home), check=False)
    assert tried.returncode == 1, output(tried)
    assert "KV101" in tried.stdout and "codec/talker.py" in tried.stdout, output(tried)
    unstage_all(user_repo)


@pytest.fixture(scope="session")
def installed_hook(user_repo, pre_commit_home) -> Path:
    """The repository's .pre-commit-config.yaml installed as its git hook, the
    hook's environment built once (online) into a kept pre-commit home."""
    run([*PRE_COMMIT, "install", "--install-hooks"], cwd=user_repo, env=hook_env(pre_commit_home))
    return pre_commit_home


def test_commit_adding_an_undeclared_cache_is_blocked(user_repo, installed_hook):
    before = run(["git", "rev-parse", "HEAD"], cwd=user_repo).stdout
    stage(user_repo, "codec/talker.py", undeclared())
    blocked = commit(user_repo, hook_env(installed_hook))
    assert blocked.returncode != 0
    assert "KV101" in output(blocked) and "codec/talker.py" in output(blocked), output(blocked)
    # Only the staged file is reported: base.py's own finding (Scratchpad) stays silent.
    assert "codec/base.py" not in output(blocked), output(blocked)
    assert run(["git", "rev-parse", "HEAD"], cwd=user_repo).stdout == before
    unstage_all(user_repo)


def test_a_cache_declared_by_an_unstaged_base_class_passes(user_repo, installed_hook):
    stage(user_repo, "codec/codec.py", INHERITING)
    passed = commit(user_repo, hook_env(installed_hook))
    assert passed.returncode == 0, output(passed)
    assert "kvlint" in output(passed) and "Passed" in output(passed), output(passed)
    run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=user_repo, env=git_env())
    # The control: the same class deriving from a base without a declaration fails.
    stage(user_repo, "codec/codec.py",
          INHERITING.replace("from .base import CodecDecoderBase", "from torch.nn import Module as CodecDecoderBase"))
    failed = commit(user_repo, hook_env(installed_hook))
    assert failed.returncode != 0 and "KV101" in output(failed), output(failed)
    assert "codec/codec.py" in output(failed), output(failed)
    unstage_all(user_repo)


def test_suppression_comment_is_honoured(user_repo, installed_hook):
    stage(user_repo, "codec/talker.py", undeclared("  # kvlint: ignore[KV101] the engine's runner declares it"))
    passed = commit(user_repo, hook_env(installed_hook))
    assert passed.returncode == 0, output(passed)
    run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=user_repo, env=git_env())


def test_hook_runs_offline_after_the_first_install(user_repo, installed_hook, kvlint_snapshot, tmp_path):
    offline = hook_env(installed_hook, **OFFLINE_ENV)
    stage(user_repo, "codec/talker.py", undeclared())
    blocked = commit(user_repo, offline)
    assert blocked.returncode != 0 and "KV101" in output(blocked), output(blocked)
    unstage_all(user_repo)
    stage(user_repo, "codec/codec.py", INHERITING)
    passed = commit(user_repo, offline)
    assert passed.returncode == 0, output(passed)
    run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=user_repo, env=git_env())
    # The control: with an empty pre-commit home the same offline run must
    # install, and fails, so the runs above really had no network.
    stage(user_repo, "codec/talker.py", undeclared())
    cold = run([*PRE_COMMIT, "run"], cwd=user_repo, env=hook_env(tmp_path / "empty-home", **OFFLINE_ENV),
               check=False, timeout=300)
    assert cold.returncode != 0 and "KV101" not in output(cold), output(cold)
    assert "Installing environment" in output(cold), output(cold)
    unstage_all(user_repo)
