"""`python -m kvlint ARGS` runs the installed native kvlint with ARGS."""

from __future__ import annotations

import os
import sys

from kvlint import find_kvlint_bin, runtime_pythonpath


def main() -> None:
    try:
        binary = find_kvlint_bin()
    except FileNotFoundError as error:
        print(f"kvlint: {error}", file=sys.stderr)
        sys.exit(2)
    env = dict(os.environ)
    # The executable finds the harness from its own location too; naming it
    # here is exact when this interpreter's package is the one in use.
    if (runtime_pythonpath() / "kvlint_runtime").is_dir():
        env.setdefault("KVLINT_RUNTIME_PYTHONPATH", str(runtime_pythonpath()))
    os.execve(binary, ["kvlint", *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
