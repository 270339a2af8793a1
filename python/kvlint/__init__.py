"""kvlint: checks model-local KV cache declarations (model_local_kv_specs).

`pip install` puts the native `kvlint` executable in the scripts directory (on
PATH, as ruff does); this package finds it for `python -m kvlint` and holds the
runtime harness that `kvlint confirm` runs in the model's own interpreter
(`runtime/kvlint_runtime`).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

__all__ = ["find_kvlint_bin", "runtime_pythonpath"]


def runtime_pythonpath() -> Path:
    """The directory holding kvlint_runtime (what KVLINT_RUNTIME_PYTHONPATH names)."""
    return Path(__file__).resolve().parent / "runtime"


def _user_scheme() -> str:
    if sys.version_info >= (3, 10):
        return sysconfig.get_preferred_scheme("user")
    return f"{os.name}_user"


def find_kvlint_bin() -> Path:
    """The installed native kvlint: this interpreter's scripts directory, the user
    scheme's (pip install --user), or <prefix>/bin beside <prefix>/lib/pythonX.Y
    (pip install --prefix)."""
    name = "kvlint" + (sysconfig.get_config_var("EXE") or "")
    package = Path(__file__).resolve().parent
    candidates = [
        Path(sysconfig.get_path("scripts")) / name,
        Path(sysconfig.get_path("scripts", scheme=_user_scheme())) / name,
        package.parents[3] / "bin" / name,
    ]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(
        "the kvlint executable is not installed beside this package (looked in "
        + ", ".join(str(c.parent) for c in candidates)
        + "); reinstall it with `pip install kvlint`"
    )
