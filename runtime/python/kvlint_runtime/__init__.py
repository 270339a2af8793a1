"""kvlint runtime harness: boots a model, observes its KV caches and CUDA-graph
captures, collects its declarations, and streams JSON lines for `kvlint confirm`.

Run as `python -m kvlint_runtime run --entry ENTRY.json` (see runtime-protocol).
"""
__version__ = "0.1.0"
