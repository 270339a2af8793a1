"""Boot entries for real vllm-omni 0.32.0rc1 owners of raw (plain-tensor) K/V
(tests/real_trees/runtime/kvlint_0_32.toml).

As real_boot (0.30.0): factories and tiny configs are ours, nothing from vllm-omni is copied or
stubbed; the classes come from the 0.32.0rc1 wheel unpacked where `kvlint check` analysed it
($KVLINT_REAL_TREE), put ahead of the vllm-omni 0.30.0 installed in the tf5 venv (vllm stays
0.30.0: every module imported here imports against it).
"""
from __future__ import annotations

import os
import sys

_tree = os.environ.get("KVLINT_REAL_TREE")
if _tree and _tree not in sys.path:
    sys.path.insert(0, _tree)
