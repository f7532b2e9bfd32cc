"""A benchmark worker process: one engine flavour, driven by the coordinator over a pipe.

Each flavour (our rules as pure Python, our rules compiled with mypyc, the
`dominoes` package, OpenSpiel) runs in its own process, started as
``python -P -m bench.worker`` (``-P``: the working directory must not
shadow ``PYTHONPATH=build/compiled``). The coordinator sends one JSON command a
line on stdin and reads one JSON answer a line on stdout; only one worker runs
at a time, so the workers take turns on the same core and none disturbs another.

Commands:
- ``{"op": "info"}``: Python version and whether the rules are compiled;
- ``{"op": "play", "workload": {...}, "seconds": s}`` or ``"games": n``: play
  random rounds (see `bench.workloads`); answers games, decisions,
  elapsed wall seconds and CPU seconds of this process;
- ``{"op": "stateless", "variant": v, "players": p, ...}``: see `bench.stateless`.
"""
from __future__ import annotations

import gc
import json
import platform
import sys
import time
import traceback
from typing import Any


def _info() -> dict[str, Any]:
    info: dict[str, Any] = {"python": platform.python_version(), "implementation": platform.python_implementation()}
    try:
        import engine_service.rules.round as rnd

        info["rules_file"] = rnd.__file__
        info["compiled"] = not str(rnd.__file__).endswith(".py")
    except ImportError as exc:  # pragma: no cover - reported, not fatal
        info["rules_error"] = repr(exc)
    return info


def serve(stdin: Any = sys.stdin, stdout: Any = sys.stdout) -> int:
    from bench import workloads

    cache: dict[str, workloads.Workload] = {}
    for line in stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        try:
            op = cmd["op"]
            if op == "info":
                answer: dict[str, Any] = _info()
            elif op == "play":
                key = json.dumps(cmd["workload"], sort_keys=True)
                if key not in cache:
                    cache[key] = workloads.make(cmd["workload"])
                work = cache[key]
                gc.collect()
                seconds = cmd.get("seconds")
                games = cmd.get("games")
                c0, t0 = time.process_time(), time.perf_counter()
                deadline = t0 + (seconds if seconds is not None else 0.0)
                done, decisions = work.play(deadline, games)
                elapsed = time.perf_counter() - t0
                answer = {"games": done, "decisions": decisions, "elapsed": elapsed,
                          "cpu": time.process_time() - c0}
            elif op == "stateless":
                from bench.stateless import measure

                answer = measure(cmd["variant"], int(cmd["players"]), int(cmd.get("games", 20)),
                                 int(cmd.get("seed", 7)), int(cmd.get("repeat", 5)))
            elif op == "quit":
                stdout.write(json.dumps({"ok": True}) + "\n")
                stdout.flush()
                return 0
            else:
                raise ValueError(f"unknown op {op!r}")
            answer["ok"] = True
        except Exception as exc:  # noqa: BLE001 - any failure goes back to the coordinator
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()}
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve())
