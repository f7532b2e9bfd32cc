"""The gateway addresses a client may use, and what to do after a failure: try the next one, or wait.

Several gateways in front of one store (one Redis, or one SQLite file) serve the same matches and tables, so a
client given their addresses goes on through another when one stops answering. `Gateways` holds the addresses
and the one in use (kept after a failover: the client stays where it works); `Attempts` counts the failures in
a row of one call or one stream: a failed address moves the client to the next one at once while some address
has not failed yet, and once every one has, it waits (exponential backoff, jittered, at least what the server
asked) and starts over, `limit` times. Each decision is told to `on_retry` (a terminal says it to the person).
"""
from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Attempts", "Gateways", "Retrying"]


@dataclass(frozen=True, slots=True)
class Retrying:
    """What a call or a stream does after a failure: `address` is tried after `wait` seconds (`failed` is the
    address that failed, `error` how: a `TransportError` or a retried `ProblemError`)."""

    error: Exception
    failed: str
    address: str
    wait: float


class Gateways:
    """The addresses of gateways that serve the same store, and the one in use (`current`)."""

    def __init__(self, urls: str | Sequence[str], on_retry: Callable[[Retrying], None] | None = None) -> None:
        listed = [urls] if isinstance(urls, str) else list(urls)
        if not listed:
            raise ValueError("no gateway address")
        self.urls: list[str] = list(dict.fromkeys(u.rstrip("/") for u in listed))
        self.on_retry = on_retry
        self._index = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Gateways({self.urls!r}, current={self.current!r})"

    @property
    def current(self) -> str:
        return self.urls[self._index]

    def move_on(self, failed: str) -> str:
        """After `failed` failed: the next address (unless another thread has moved on already)."""
        with self._lock:
            if self.urls[self._index] == failed:
                self._index = (self._index + 1) % len(self.urls)
            return self.urls[self._index]

    def tell(self, retrying: Retrying) -> None:
        if self.on_retry is not None:
            self.on_retry(retrying)


class Attempts:
    """The failures in a row of one call or one stream across the addresses (see the module's docstring)."""

    def __init__(self, gateways: Gateways, limit: int, backoff: float, max_backoff: float) -> None:
        self.gateways = gateways
        self.limit = limit
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.waits = 0
        self._tried: set[str] = set()

    def reset(self) -> None:
        """It worked: the next failure is the first in a row again."""
        self.waits = 0
        self._tried.clear()

    def after(self, error: Exception, failed: str, *, move_on: bool = True, at_least: float = 0.0,
              base: float | None = None) -> float | None:
        """A failure of `failed`: the seconds to wait before trying `gateways.current` again (0: another address,
        at once), or None when every address has failed `limit` times after waiting (give up). `move_on`: the
        address is at fault (not a busy engine behind it); `at_least`: the server's `Retry-After`; `base`: the
        backoff's first step when not the usual one (a stream's `retry:`)."""
        self._tried.add(failed)
        address = self.gateways.move_on(failed) if move_on else failed
        if address in self._tried:
            if self.waits >= self.limit:
                return None
            step = self.backoff if base is None else base
            wait = float(min(self.max_backoff, max(at_least, step * 2 ** self.waits * (0.5 + random.random()))))
            self.waits += 1
            self._tried.clear()
        else:
            wait = 0.0
        self.gateways.tell(Retrying(error, failed, address, wait))
        return wait
