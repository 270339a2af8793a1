"""A fake kvlint_runtime harness for the host's tests (tests/confirm).

Invoked exactly like the real one: `python -m kvlint_runtime run --entry ENTRY.json`.
What it does is chosen by the FAKE_SCENARIO environment variable (set through the
boot entry's env):
  canned    print the lines of $FAKE_EVENTS verbatim, then exit 0
  crash     print start and one cache line, then die of SIGSEGV
  hang      print start, start a grandchild that sleeps (pid written to
            $FAKE_PIDFILE), then sleep; with FAKE_IGNORE_TERM=1 ignore SIGTERM;
            with FAKE_SETSID=1 the grandchild runs in a session of its own
            (the harness's own pid goes to $FAKE_PIDFILE.harness)
  non_utf8  print start, the byte 0xff as a line, 5000 three-byte characters
            then "!" on stderr, and exit 1
  garbage   print start, one cache line, a non-JSON line, another cache line, end
  memory    print start, an error of kind memory, end
  truncated print start, then half a JSON line without newline, then SIGSEGV
  noend     print start and exit 0 without "end"
$FAKE_ENTRY_COPY, when set, receives {"argv", "entry", "env"} for the test to check.
"""
import json
import os
import signal
import subprocess
import sys
import time


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def cache(model, line=10):
    return {"event": "cache", "model": model, "path": "streaming", "concurrency": 1, "class": "DynamicCache",
            "file": "/nonexistent/fake_model.py", "line": line, "owner": "FakeOwner", "rows": 1, "positions": 8,
            "layers": 2, "bytes": 4096, "bytes_per_row": 4096, "objects": 1, "alive_after_step": True,
            "in_capture": False, "growth": [4096]}


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "run" or sys.argv[2] != "--entry":
        print("usage: kvlint_runtime run --entry ENTRY.json", file=sys.stderr)
        return 2
    with open(sys.argv[3]) as f:
        entry = json.load(f)
    model = entry["name"]
    copy = os.environ.get("FAKE_ENTRY_COPY")
    if copy:
        with open(copy, "w") as f:
            json.dump({"argv": sys.argv, "entry": entry,
                       "env": {k: os.environ.get(k) for k in ("PYTHONPATH", "HF_HUB_OFFLINE", "FAKE_SCENARIO")}}, f)
    print("model output goes to stderr", file=sys.stderr)
    scenario = os.environ.get("FAKE_SCENARIO", "canned")
    start = {"event": "start", "model": model, "pid": os.getpid(), "python": sys.version.split()[0],
             "torch": "none", "transformers": "none", "device": entry.get("device", "cpu")}
    if scenario == "canned":
        with open(os.environ["FAKE_EVENTS"]) as f:
            for line in f:
                sys.stdout.write(line if line.endswith("\n") else line + "\n")
                sys.stdout.flush()
        return 0
    emit(start)
    if scenario == "crash":
        emit(cache(model))
        os.kill(os.getpid(), signal.SIGSEGV)
    elif scenario == "hang":
        if os.environ.get("FAKE_IGNORE_TERM") == "1":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                      start_new_session=os.environ.get("FAKE_SETSID") == "1")
        pidfile = os.environ["FAKE_PIDFILE"]
        with open(pidfile + ".harness", "w") as f:
            f.write(str(os.getpid()))
        with open(pidfile + ".tmp", "w") as f:
            f.write(str(grandchild.pid))
        os.rename(pidfile + ".tmp", pidfile)  # whole or absent for a test that polls for it
        emit(cache(model))
        while True:
            time.sleep(60)
    elif scenario == "garbage":
        emit(cache(model, 10))
        sys.stdout.write("Loading checkpoint shards: 100%\n")
        sys.stdout.flush()
        emit(cache(model, 11))
        emit({"event": "end", "model": model})
    elif scenario == "memory":
        emit({"event": "error", "model": model, "path": "streaming", "concurrency": 4, "kind": "memory",
              "message": "CUDA out of memory. Tried to allocate 2.00 GiB"})
        emit({"event": "end", "model": model})
    elif scenario == "truncated":
        sys.stdout.write('{"event": "cache", "model": "')
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    elif scenario == "noend":
        return 0
    elif scenario == "non_utf8":
        sys.stdout.flush()
        os.write(1, b"\xff\n")
        sys.stderr.write("\u2588" * 5000 + "!\n")
        sys.stderr.flush()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
