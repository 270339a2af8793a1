"""Command line: python -m kvlint_runtime run --entry ENTRY.json"""
from __future__ import annotations

import argparse
import faulthandler
import json
import os
import sys
from typing import Any, Dict, TextIO


def _claim_stdout() -> TextIO:
    """Keeps the real stdout for the JSON stream and points fd 1 at stderr.

    Done at the file-descriptor level so prints from C extensions and
    subprocesses of the model cannot corrupt the stream either.
    """
    sys.stdout.flush()
    stream_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(stream_fd, "w", encoding="utf-8", buffering=1)


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(prog="kvlint_runtime")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="boot one model entry and stream JSON events")
    run.add_argument("--entry", required=True, help="ENTRY.json written by `kvlint confirm`")
    args = parser.parse_args(argv)

    # Nothing may reach the network at run time: no weights, no hub lookups.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    faulthandler.enable(file=sys.stderr)  # a segfaulting model leaves a traceback on stderr

    stream = _claim_stdout()

    def emit(event: Dict[str, Any]) -> None:
        stream.write(json.dumps(event, separators=(",", ":"), default=str) + "\n")
        stream.flush()

    name = ""
    try:
        with open(args.entry, encoding="utf-8") as handle:
            entry = json.load(handle)
        name = entry.get("name", "")
        from .harness import run_entry

        run_entry(entry, emit)
    except BaseException as exc:  # noqa: BLE001 - always try to say why, then "end"
        if isinstance(exc, KeyboardInterrupt):
            raise
        kind = "memory" if isinstance(exc, MemoryError) else "exception"
        try:
            emit({"event": "error", "model": name, "path": None, "concurrency": None,
                  "kind": kind, "message": f"{type(exc).__name__}: {exc}"[:2000]})
        except BaseException:  # noqa: BLE001
            pass
    emit({"event": "end", "model": name})
    return 0


if __name__ == "__main__":
    sys.exit(main())
