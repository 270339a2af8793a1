"""Boot entries for the real vllm-omni 0.30.0 classes (tests/real_trees/runtime).

Factories and tiny configs written here; nothing from vllm-omni is copied: the classes are
imported from the wheel that tests/real_trees/check_runtime_tree.py fetched from PyPI, unpacked
where `kvlint check` analysed it ($KVLINT_REAL_TREE), so the frames the harness records are the
lines the static findings name. The interpreter is runtime/setup-env tf5 (torch 2.14.0,
transformers 5.14.1, vllm 0.30.0 and vllm-omni 0.30.0 installed with --no-deps).
"""
from __future__ import annotations

import os
import sys

_tree = os.environ.get("KVLINT_REAL_TREE")
if _tree and _tree not in sys.path:
    # Ahead of the installed vllm_omni: the analysed copy is the one whose lines findings name.
    sys.path.insert(0, _tree)
