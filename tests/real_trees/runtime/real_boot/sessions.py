"""Per-request session bookkeeping shared by the boot entries: the engine's view of requests."""
from __future__ import annotations

from typing import Any, Callable, Dict


class Sessions:
    """request id -> per-request state, finished (evicted) when the next drive starts.

    The models keep per-request state until the engine reports the request finished
    (`on_requests_finished`); a drive leaves its requests in flight, so what the harness
    measures after it is what a running engine holds, and the next drive finishes them.
    """

    def __init__(self) -> None:
        self.live: Dict[str, Any] = {}

    def finish_all(self, on_finished: Callable[[str, Any], None] = lambda rid, state: None) -> None:
        for rid, state in list(self.live.items()):
            on_finished(rid, state)
        self.live.clear()
