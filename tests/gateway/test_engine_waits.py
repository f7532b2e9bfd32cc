"""Where a gateway worker's gRPC calls wait (`api_gateway.engine_waits`): on native threads, the calling
greenlet parked and the hub free meanwhile, at most `size` at once, outcomes delivered to whoever still waits.

The in-process tests run gevent without monkey patching (the hub in this thread, native threads for the
tasks); nothing here waits on time: the tasks meet on native barriers and events. The last test runs a
patched process as the gateway's worker is, with grpcio's calls to a real engine going through the waits."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import gevent
import pytest

from api_gateway.engine_waits import CompletionWaits

from .conftest import EngineProc

REPO = Path(__file__).resolve().parents[2]
#: How long a native wait in these tests may block before the test fails instead of hanging.
BOUND = 10.0


def _until(check: object, bound: float = BOUND) -> None:
    """Yield to the hub until `check()` holds (the hub delivers outcomes meanwhile)."""
    with gevent.Timeout(bound):
        while not check():  # type: ignore[operator]
            gevent.sleep(0.001)


def test_the_result_comes_back_and_an_exception_is_raised_in_the_caller() -> None:
    waits = CompletionWaits()
    assert gevent.spawn(waits.apply, pow, (2, 10)).get(timeout=BOUND) == 1024
    assert gevent.spawn(waits.apply, dict, (), {"a": 1}).get(timeout=BOUND) == {"a": 1}
    with pytest.raises(ZeroDivisionError):
        gevent.spawn(waits.apply, divmod, (1, 0)).get(timeout=BOUND)
    assert waits.threads == 1  # one call at a time: one thread, used again


def test_the_hub_runs_other_greenlets_while_a_call_waits() -> None:
    waits = CompletionWaits()
    release = threading.Event()  # native: this test's process is not patched
    beats: list[int] = []

    def heartbeat() -> None:
        for i in range(5):
            beats.append(i)
            gevent.sleep(0)
        release.set()  # only reached if the hub ran this greenlet while the call waited

    call = gevent.spawn(waits.apply, release.wait, (BOUND,))
    gevent.spawn(heartbeat)
    assert call.get(timeout=BOUND) is True
    assert beats == [0, 1, 2, 3, 4]


def test_calls_wait_at_once_on_their_own_threads() -> None:
    waits = CompletionWaits(size=4)
    meet = threading.Barrier(4, timeout=BOUND)  # broken unless all four wait at the same time
    calls = [gevent.spawn(waits.apply, meet.wait) for _ in range(4)]
    assert sorted(c.get(timeout=BOUND) for c in calls) == [0, 1, 2, 3]
    assert waits.threads == 4


def test_at_most_size_wait_at_once_and_the_rest_queue_for_a_thread() -> None:
    waits = CompletionWaits(size=2)
    gates = [threading.Event() for _ in range(3)]
    started: list[int] = []

    def task(i: int) -> int:
        started.append(i)
        assert gates[i].wait(BOUND)
        return i

    calls = [gevent.spawn(waits.apply, task, (i,)) for i in range(3)]
    _until(lambda: len(started) == 2)
    assert waits.threads == 2
    first = started[0]
    waiting = ({0, 1, 2} - set(started)).pop()  # the one still queued
    gates[first].set()
    _until(lambda: len(started) == 3)
    assert started[2] == waiting and waits.threads == 2  # taken by the freed thread, no third thread
    for gate in gates:
        gate.set()
    assert sorted(c.get(timeout=BOUND) for c in calls) == [0, 1, 2]


def test_a_caller_gone_meanwhile_leaves_its_outcome_and_the_next_call_is_served() -> None:
    waits = CompletionWaits(size=1)
    gate = threading.Event()
    gone = gevent.spawn(waits.apply, gate.wait, (BOUND,))
    _until(lambda: waits.threads == 1)
    gone.kill()  # a request's greenlet killed (its deadline, a stop) while its call waits
    gate.set()
    assert gevent.spawn(waits.apply, pow, (3, 3)).get(timeout=BOUND) == 27  # same thread, after the first


def test_called_from_the_hub_or_a_native_thread_it_runs_in_place() -> None:
    waits = CompletionWaits()
    hub = gevent.get_hub()
    seen: list[int] = []
    hub.loop.run_callback(lambda: seen.append(waits.apply(threading.get_ident)))
    _until(lambda: seen)
    out: list[int] = []
    thread = threading.Thread(target=lambda: out.append(waits.apply(threading.get_ident)))
    thread.start()
    thread.join(BOUND)
    assert seen == [threading.get_ident()] and out == [thread.ident]
    assert waits.threads == 0


PATCHED = """
from gevent import monkey
monkey.patch_all()
import json, sys
import gevent
from gevent.threadpool import ThreadPool
from api_gateway import engine_waits
waits = engine_waits.install()
from domino.v1.channel import EngineChannel
channel = EngineChannel(sys.argv[1])
statuses = gevent.joinall([gevent.spawn(channel.health, 5.0) for _ in range(6)], raise_error=True)
print(json.dumps({"statuses": [g.value for g in statuses], "threads": waits.threads,
                  "hub_pool_is_gevents": isinstance(gevent.get_hub().threadpool, ThreadPool)}))
"""


def test_grpcio_waits_on_them_in_a_patched_process(engine_proc: EngineProc) -> None:
    out = subprocess.run([sys.executable, "-c", PATCHED, engine_proc.address], cwd=REPO, capture_output=True,
                         text=True, timeout=60, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["statuses"] == ["SERVING"] * 6
    assert got["threads"] >= 1  # grpcio's waits went here, not to the hub's pool
    assert got["hub_pool_is_gevents"] is True  # name resolution and the rest keep gevent's pool
