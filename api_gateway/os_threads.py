"""The operating system's own thread, its identity and its sleep, even under gevent's monkey patching.

The gateway's workers run gevent, which makes `threading`, `_thread` and `time.sleep` cooperative: a
"thread" started there is a greenlet of the worker's one OS thread. Two jobs need the OS's own: the store's
checkpointer (`api_gateway.store.sqlite`), whose `wal_checkpoint` blocks in SQLite, and the threads that wait
on grpcio's completion queues (`api_gateway.engine_waits`), whose waits block in C. Both take these from here,
gevent's originals (`gevent.monkey.get_original`), which are the plain ones where nothing is patched.
"""
from __future__ import annotations

from collections.abc import Callable

from gevent.monkey import get_original

__all__ = ["os_sleep", "os_thread_ident", "start_os_thread"]

start_os_thread: Callable[..., int] = get_original("_thread", "start_new_thread")
os_thread_ident: Callable[[], int] = get_original("_thread", "get_ident")
os_sleep: Callable[[float], None] = get_original("time", "sleep")
