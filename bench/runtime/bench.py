"""Runtime harness benchmark (not a test): prints measured figures beside targets.

1. Wall time of the harness on the four reference fixture models on CPU,
   each in its own child process as `kvlint confirm` runs them (interpreter
   start, imports, build, both paths at concurrency 1 and 4).  Target <= 60 s.
2. Overhead of the harness's patches on a decode step of a real transformers
   model (8-layer sliding-window Mistral, the codec decoder's geometry, batch 4,
   one token per step, implicit DynamicCache).  Target <= 5 %.

Run with the runtime interpreter:
    "$(runtime/setup-env | tail -n 1)" bench/runtime/bench.py [--overhead-only]
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "runtime" / "fixtures"
RUNTIME_PYTHON = REPO / "runtime" / "python"
MODELS = [
    ("codec", "codec_decoder.model", ["streaming", "stateless"]),
    ("local_transformer", "local_transformer.model", ["eager", "graph"]),
    ("whisper_encoder", "whisper_encoder.model", ["streaming", "offline"]),
    ("talker", "talker.model", ["generate"]),
]


def time_models() -> list:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(RUNTIME_PYTHON), str(FIXTURES)]),
               OMP_NUM_THREADS="1")
    rows = []
    for name, module, paths in MODELS:
        entry = {"name": name, "factory": f"{module}:build", "driver": f"{module}:drive", "paths": paths,
                 "device": "cpu", "concurrency": [1, 4], "steps": 4, "collector": "",
                 "python_path": [str(FIXTURES)]}
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump(entry, handle)
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "kvlint_runtime", "run", "--entry", handle.name],
                              capture_output=True, text=True, env=env)
        elapsed = time.perf_counter() - start
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
        os.unlink(handle.name)
        events = [json.loads(line) for line in proc.stdout.splitlines()]
        ended = bool(events) and events[-1]["event"] == "end"
        rows.append((name, elapsed, cpu, ended and proc.returncode == 0))
    return rows


def decode_overhead(steps: int = 12, repeats: int = 5) -> tuple:
    """Median CPU time of a decode step without and with the harness installed.

    CPU time of this process (single-threaded torch), not wall time, so other
    load on the machine does not land on one side of the comparison only.
    """
    import torch
    from transformers import DynamicCache, MistralModel

    sys.path.insert(0, str(RUNTIME_PYTHON))
    sys.path.insert(0, str(FIXTURES))
    from codec_decoder.model import codec_config
    from kvlint_runtime.tracking import Tracker

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = MistralModel(codec_config()).eval()
    token = torch.randn(4, 1, model.config.hidden_size)

    @torch.no_grad()
    def decode() -> float:
        past = None
        start = time.process_time()
        for _ in range(steps):
            past = model(inputs_embeds=token, past_key_values=past, use_cache=True).past_key_values
        return (time.process_time() - start) / steps

    def bookkeeping(tracker: "Tracker", count: int = 2000) -> float:
        # What the harness adds to one update(): the wrapper's guard plus
        # re-measuring the touched layer. Timed on its own because it is far
        # below the run-to-run noise of a whole decode step on a busy machine.
        cache, kv = DynamicCache(), torch.zeros(4, 16, 71, 64)
        cache.update(kv, kv, 0)
        start = time.process_time()
        for _ in range(count):
            tracker._updating.add(id(cache))
            tracker._updating.discard(id(cache))
            tracker._on_update(cache, 0)
        return (time.process_time() - start) / count

    decode()  # warm up allocator and kernels
    plain, tracked, added = [], [], []
    tracker = Tracker()
    for _ in range(repeats):  # interleaved so load changes hit both sides alike
        plain.append(decode())
        with tracker.installed():
            tracker.begin_run()
            tracked.append(decode())
            added.append(bookkeeping(tracker))
    layers = model.config.num_hidden_layers
    return statistics.median(plain), statistics.median(tracked), statistics.median(added), layers


def main() -> int:
    torch_threads = os.environ.get("OMP_NUM_THREADS", "default")
    rows = [] if "--overhead-only" in sys.argv else time_models()
    total = sum(row[1] for row in rows)
    total_cpu = sum(row[2] for row in rows)
    plain, tracked, per_update, layers = decode_overhead()
    overhead = (tracked - plain) / plain * 100
    # The harness only acts in Cache.__init__ and Cache.update: its cost per
    # step is layers x (added cost of one update), measured in isolation too.
    derived = layers * per_update / plain * 100
    print(f"{'metric':<48} {'measured':>12} {'target':>10}  ok")
    for name, elapsed, cpu, ok in rows:
        print(f"{'harness run: ' + name + ' (wall)':<48} {elapsed:>10.1f} s {'':>10}  {'yes' if ok else 'NO (no end)'}")
        print(f"{'harness run: ' + name + ' (cpu)':<48} {cpu:>10.1f} s")
    if rows:
        print(f"{'harness run: four models, total (wall)':<48} {total:>10.1f} s {'<= 60 s':>10}  {'yes' if total <= 60 else 'NO'}")
        print(f"{'harness run: four models, total (cpu)':<48} {total_cpu:>10.1f} s")
    print(f"{'decode step, no harness (median)':<48} {plain * 1e3:>9.2f} ms {'':>10}")
    print(f"{'decode step, harness installed (median)':<48} {tracked * 1e3:>9.2f} ms {'':>10}")
    print(f"{'harness overhead per decode step (A/B)':<48} {overhead:>10.1f} % {'<= 5 %':>10}  {'yes' if overhead <= 5 else 'NO'}")
    print(f"{'harness bookkeeping per Cache.update':<48} {per_update * 1e6:>9.1f} us {'':>10}")
    print(f"{'overhead per decode step (layers x bookkeeping)':<48} {derived:>10.2f} % {'<= 5 %':>10}  {'yes' if derived <= 5 else 'NO'}")
    print(f"(cpu count {os.cpu_count()}, OMP_NUM_THREADS={torch_threads}, load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
