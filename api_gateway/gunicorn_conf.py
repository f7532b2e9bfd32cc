"""gunicorn settings for the gateway: ``gunicorn -c python:api_gateway.gunicorn_conf``.

`domino serve gateway` uses this file (after turning its flags into the
environment variables of `api_gateway.config`); it also works with gunicorn
run by hand. What it takes care of:

- bind, workers (processes) and connections per worker from GATEWAY_* variables;
  the worker class is `api_gateway.worker.GatewayWorker` (gevent: a connection is
  a greenlet, not a thread, and every read has a deadline: see that module);
- each worker listens on its own socket (SO_REUSEPORT, gunicorn's ``reuse_port``)
  and the kernel spreads new connections over them: with one shared socket the
  first idle worker accepted a whole burst of keep-alive connections, and under
  load one worker did all the work while the other idled (bench: /readyz
  1,040-1,940 req/s from run to run, 1,620-1,950 balanced). Port 0 is resolved
  here, in the master, which keeps the port reserved (bound, never listening);
- the app is not preloaded: each worker imports `api_gateway.wsgi` after the
  fork, so no gRPC channel ever crosses a fork;
- Prometheus multiprocess mode: PROMETHEUS_MULTIPROC_DIR is set here in the
  master (a fresh private directory unless the operator gives one) before any
  worker imports prometheus-client; stale files are removed at start, a dead
  worker's files are marked on exit, and a directory made here is removed when
  the master exits;
- the master serves ``/metrics`` on its own port (GATEWAY_METRICS_PORT, 9465; every
  worker's files summed), started before the first worker is forked;
- once the first worker listens, one JSON line on stdout,
  ``{"http": "127.0.0.1:8080", "metrics": "127.0.0.1:9465"}`` (with port 0, how a caller
  learns the ports), and a log line naming the browser table (``/play``) and the API docs
  (``/docs``); logs go to stderr, gunicorn's "Listening at:" with the real address
  (`AddressLogger`);
- every worker freezes the objects its app is made of (`freeze_heap`) so that the garbage collector
  stops scanning them, once per request burst, at ~60 ms a full pass;
- gunicorn's control socket is off (it would write under $HOME, which is
  read-only in the container).
"""
from __future__ import annotations

import gc
import glob
import json
import math
import os
import shutil
import socket
import sys
import tempfile
import time
from typing import Any

from gunicorn.glogging import Logger

from api_gateway.config import from_env
from api_gateway.server import ready_line

_OWNED_ENV = "GATEWAY_METRICS_DIR_OWNED"
_MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
_START_ENV = "GATEWAY_MASTER_START_TIME"


def _metrics_dir() -> str:
    """The multiprocess directory: the operator's, or a private one made now (in the master)."""
    given = os.environ.get(_MULTIPROC_ENV)
    if given:
        os.makedirs(given, exist_ok=True)
        return given
    made = tempfile.mkdtemp(prefix="domino-gateway-metrics-")
    os.environ[_MULTIPROC_ENV] = made
    os.environ[_OWNED_ENV] = made
    return made


_cfg = from_env()
_dir = _metrics_dir()
os.environ.setdefault(_START_ENV, repr(time.time()))


def _reserve(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port) with SO_REUSEPORT and never listening: it holds the port
    (a free one for port 0) for the workers' own sockets, and the kernel sends it no connection."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    reserved = socket.socket(family, socket.SOCK_STREAM)
    reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    reserved.bind((host, port))
    return reserved


_reserved = _reserve(_cfg.host, _cfg.port)
_port = int(_reserved.getsockname()[1])
_host = f"[{_cfg.host}]" if ":" in _cfg.host else _cfg.host
bind = [f"{_host}:{_port}"]
reuse_port = True
wsgi_app = "api_gateway.wsgi:app"
workers = _cfg.workers
worker_connections = _cfg.connections
worker_class = "api_gateway.worker.GatewayWorker"
preload_app = False
timeout = 30
# A stopping worker ends its spectator streams at once and closes its idle connections
# (`api_gateway.worker`); what it waits for are the calls in flight, each bounded by the
# engine's deadline. gunicorn's master SIGKILLs a worker still there after this.
graceful_timeout = math.ceil(_cfg.engine_timeout) + 3
keepalive = _cfg.read_timeout  # the gevent worker's header deadline and keep-alive idle time
control_socket_disable = True
errorlog = "-"
loglevel = _cfg.log_level.lower()
# Access lines (off unless GATEWAY_ACCESS_LOG) go to stderr too: stdout carries only the listening line.
accesslog = ("/dev/stderr" if os.environ.get("GATEWAY_ACCESS_LOG", "").strip().lower() in ("1", "true", "yes", "on")
             else None)


class AddressLogger(Logger):  # type: ignore[misc]
    """gunicorn's logger, with the address in its "Listening at:" line. Each worker binds its own
    socket (`reuse_port`), so the master holds no listener to name and gunicorn logged
    "Listening at:  (pid)"; the address is the one bound here."""

    def info(self, msg: str, *args: Any, **kwargs: Any) -> None:
        if msg.startswith("Listening at:") and args and not args[0]:
            args = (f"http://{bind[0]}", *args[1:])
        super().info(msg, *args, **kwargs)


logger_class = AddressLogger


def on_starting(server: Any) -> None:
    """Before the first worker: no counts left over from an earlier run in the same directory."""
    for path in glob.glob(os.path.join(_dir, "*.db")):
        os.remove(path)


_metrics_address: list[str] = []


def when_ready(server: Any) -> None:
    """In the master, before any worker is forked: `/metrics` on its own port (once: not again on a
    reload). It imports the metrics module here, after PROMETHEUS_MULTIPROC_DIR is set above."""
    if _cfg.metrics_port is not None and not _metrics_address:
        from api_gateway.metrics import serve

        _metrics_address.append(serve(_cfg.host, _cfg.metrics_port))


def freeze_heap() -> None:
    """Move everything alive once the app is loaded (~140,000 objects: Flask, marshmallow, SQLAlchemy,
    grpcio, protobuf ...) out of the garbage collector's reach (`gc.freeze`): they live as long as the
    worker, and a full collection scanned them all, ~60 ms during which the worker's every connection
    waited (a greenlet cannot run while the collector does), about once per thousand sealed applies; the
    younger collections skip them too. What requests allocate is collected as before."""
    gc.collect()
    gc.freeze()


def post_worker_init(worker: Any) -> None:
    """The first worker listens and has loaded the app: print the addresses (the one line on stdout)
    and say where a person goes (the log). Every worker: the app's objects out of the collector's way."""
    freeze_heap()
    if worker.age == 1:
        print(json.dumps({"http": bind[0], "metrics": _metrics_address[0] if _metrics_address else None}),
              file=sys.stdout, flush=True)
        worker.log.info("%s", ready_line(f"http://{bind[0]}"))


def child_exit(server: Any, worker: Any) -> None:
    """A worker died: its live gauges (in flight) stop counting."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]


def worker_exit(server: Any, worker: Any) -> None:
    """A worker that stopped cleanly (its connections all done: `GatewayWorker.run`) leaves without
    the interpreter's teardown (gRPC, gevent's hub, every module), which took 0.5-1.5 s of a stop on a
    loaded machine: nothing of its is left to flush but the logs. A worker leaving on an error keeps
    Python's own exit and its status, which gunicorn's master reads."""
    if getattr(worker, "stopped_cleanly", False):
        import logging

        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def on_exit(server: Any) -> None:
    if os.environ.get(_OWNED_ENV) == _dir:
        shutil.rmtree(_dir, ignore_errors=True)
