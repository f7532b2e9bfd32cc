"""A gateway worker's keepers: each runs one job every `period` seconds on a thread of its own, the work
that nobody's call does (turn clocks that ran out, quick-play tables whose wait is over, matches whose
hand-off to the archive was not confirmed). A failing pass is logged and the next one comes."""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from api_gateway.store import StoreUnavailable

log = logging.getLogger("api_gateway.hosting.keepers")


class Keeper:
    """`job` every `period` seconds, on a daemon thread (a greenlet under gevent), until `stop`."""

    def __init__(self, name: str, job: Callable[[], object], period: float) -> None:
        self.name = name
        self.job = job
        self.period = period
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            try:
                self.job()
            except StoreUnavailable as exc:  # the store is back soon: the work is still due then
                log.warning("%s: not done this pass: %s", self.name, exc)
            except Exception:  # a bug must not stop every later pass
                log.exception("%s: the pass failed", self.name)

    def stop(self) -> None:
        self._stop.set()
