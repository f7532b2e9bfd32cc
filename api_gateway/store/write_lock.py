"""The write lock that a SQLite store's writers take before SQLite's own, so that a writer waits for another
process's write in steps of microseconds, and a gevent worker serves its other requests meanwhile.

SQLite's wait for its write lock (`busy_timeout`) sleeps 1, 2, 5, 10, 15, 20 ... ms between its tries, in the
calling thread. In a gateway worker (gevent) that thread is every request of the worker: at 400 sealed
applies a second over two workers, 5% of the moves' writes met the other worker's transaction (each ~0.2 ms)
and stopped their whole worker for 1 ms or more, some for 8-20 ms (docs/performance.md, "Session 56").

Every writer of the store's file first takes an `flock` on ``<file>-writer`` (`WriteLock`): each process's
connection before its transaction, and the checkpointer before a TRUNCATE. One that finds it taken tries
again every `POLL` seconds, and between two tries lets the worker's other greenlets run (`time.sleep(0)`,
which gevent's monkey patching makes a switch to its hub; a bare yield without gevent). With the flock held,
SQLite's own write lock is free, so its busy handler waits only on a writer that takes no flock (an older
release sharing the file during an upgrade). An flock is its holder's: a process that dies holding it
releases it, and a holder that stops (SIGSTOP, a debugger) makes the others' writes fail after their budget,
as SQLite's lock did, instead of hanging.
"""
from __future__ import annotations

import fcntl
import os
import time

from api_gateway.os_threads import os_sleep

__all__ = ["POLL", "WriteLock"]

#: Seconds between two tries for a taken lock, in the worker's own thread (a transaction takes ~0.2 ms).
POLL = 50e-6


class WriteLock:
    """An exclusive `flock` on `path` (made if missing), on a descriptor of this object's own: two objects
    exclude each other even in one process, and a forked child must make its own (it would share its
    parent's lock through an inherited descriptor)."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def take(self) -> bool:
        """The lock, if no other holds it now."""
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def wait(self, timeout: float) -> bool:
        """The lock within `timeout` seconds (False: another held it all that time): tried every `POLL`
        seconds, the caller's greenlet giving way to the others of its thread between tries."""
        if self.take():
            return True
        deadline = time.monotonic() + timeout
        while True:
            time.sleep(0)  # the worker's other greenlets run (gevent); a bare yield of the GIL without it
            os_sleep(POLL)
            if self.take():
                return True
            if time.monotonic() >= deadline:
                return False

    def release(self) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self._fd)
