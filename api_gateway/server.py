"""`domino serve gateway`: run the REST gateway under gunicorn (or Flask's server with --dev).

Flags become the GATEWAY_* environment variables (`api_gateway.config`), which
gunicorn's master passes to every worker; then gunicorn runs in this process
with `api_gateway.gunicorn_conf`. Once listening it prints one JSON line on
stdout, ``{"http": "127.0.0.1:8080"}``; logs go to stderr. SIGTERM stops it
gracefully (gunicorn finishes the requests in flight).

Without gunicorn installed (or with ``--dev``) Flask's threaded development
server runs instead: one process, for development only.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import sys
from collections.abc import MutableMapping, Sequence

from api_gateway.archive import database as archive_database
from api_gateway.archive.players import PlayerIdError, PlayerKeys
from api_gateway.config import (
    DEFAULT_ENGINE,
    DEFAULT_METRICS_PORT,
    DEFAULT_PORT,
    ConfigError,
    GatewayConfig,
    from_env,
)
from api_gateway.store import StoreUnavailable, check_store, default_url
from api_gateway.tokens import KeyRing, KeyRingError

log = logging.getLogger("api_gateway.server")

_FLAGS = {  # flag destination -> environment variable
    "host": "GATEWAY_HOST",
    "port": "GATEWAY_PORT",
    "public_url": "GATEWAY_PUBLIC_URL",
    "metrics_port": "GATEWAY_METRICS_PORT",
    "engine": "GATEWAY_ENGINE",
    "engine_timeout": "GATEWAY_ENGINE_TIMEOUT",
    "workers": "GATEWAY_WORKERS",
    "connections": "GATEWAY_CONNECTIONS",
    "read_timeout": "GATEWAY_READ_TIMEOUT",
    "max_body_bytes": "GATEWAY_MAX_BODY_BYTES",
    "token_store": "GATEWAY_TOKEN_STORE",
    "match_ttl": "GATEWAY_MATCH_TTL",
    "log_level": "LOG_LEVEL",
}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="domino serve gateway",
        description="Run the domino REST gateway (JSON over HTTP, forwarded to the gRPC engine).",
        epilog="Each flag falls back to its environment variable, then to the default. "
               "Sealed mode needs STATE_TOKEN_KEYS='kid:base64key,...' (newest first).",
    )
    p.add_argument("--host", help="address to bind [GATEWAY_HOST, 127.0.0.1]")
    p.add_argument("--port", help=f"HTTP port, 0 for a free one [GATEWAY_PORT, {DEFAULT_PORT}]")
    p.add_argument("--public-url", metavar="URL",
                   help="the address people reach this gateway at (http://192.168.1.20:8080): the base of the "
                        "invite links it hands out [GATEWAY_PUBLIC_URL, the address it listens on]")
    p.add_argument("--metrics-port", help="Prometheus /metrics port, 0 for a free one, 'off' for none "
                                          f"[GATEWAY_METRICS_PORT, {DEFAULT_METRICS_PORT}]")
    p.add_argument("--engine", metavar="TARGET",
                   help=f"engine gRPC target: host:port, dns:///name:port, ipv4:a:p,b:q [GATEWAY_ENGINE, {DEFAULT_ENGINE}]")
    p.add_argument("--engine-timeout", metavar="SECONDS",
                   help="deadline of each engine call [GATEWAY_ENGINE_TIMEOUT, 5]")
    p.add_argument("--workers", help="gunicorn worker processes [GATEWAY_WORKERS, 2]")
    p.add_argument("--connections", help="connections each worker holds at once [GATEWAY_CONNECTIONS, 1000]")
    p.add_argument("--read-timeout", metavar="SECONDS",
                   help="time a client has to send a request's headers, then its body; also the keep-alive "
                        "idle time [GATEWAY_READ_TIMEOUT, 5]")
    p.add_argument("--max-body-bytes", help="largest request body, more is 413 [GATEWAY_MAX_BODY_BYTES, 262144]")
    p.add_argument("--token-store", metavar="URL",
                   help="where each sealed match's latest version is kept: sqlite:///path (one host) or "
                        "redis://host:6379/0 (a cluster) [GATEWAY_TOKEN_STORE, sqlite:///$TMPDIR/"
                        "domino-gateway-versions.sqlite3]")
    p.add_argument("--match-ttl", metavar="SECONDS",
                   help="idle time after which a sealed match's tokens expire [GATEWAY_MATCH_TTL, 86400]")
    p.add_argument("--log-level", help="DEBUG, INFO, WARNING, ERROR [LOG_LEVEL, INFO]")
    p.add_argument("--access-log", action="store_true", default=None,
                   help="one line per request on stderr [GATEWAY_ACCESS_LOG]")
    p.add_argument("--dev-token-key", action="store_true", default=None,
                   help="without STATE_TOKEN_KEYS, make a random sealed-mode key for this run "
                        "(tokens die with the process) [GATEWAY_DEV_TOKEN_KEY]")
    p.add_argument("--dev", action="store_true", help="Flask's development server instead of gunicorn")
    return p


def prepare(argv: Sequence[str], environ: MutableMapping[str, str] = os.environ) -> tuple[GatewayConfig, bool]:
    """Flags into `environ`, then the validated settings and whether --dev was given.

    Raises ConfigError or KeyRingError when the settings cannot be used.
    """
    args = parser().parse_args(list(argv))
    for dest, var in _FLAGS.items():
        value = getattr(args, dest)
        if value is not None:
            environ[var] = str(value)
    if args.access_log:
        environ["GATEWAY_ACCESS_LOG"] = "true"
    if args.dev_token_key:
        environ["GATEWAY_DEV_TOKEN_KEY"] = "true"
    cfg = from_env(environ)
    try:
        check_store(cfg.token_store or default_url())  # a bad URL or path fails now, naming it
    except (ValueError, StoreUnavailable) as exc:
        raise ConfigError(f"GATEWAY_TOKEN_STORE: {exc}") from None
    try:  # a bad URL fails now; an embedded archive is upgraded (no prometheus-client import here)
        archive_database.prepare(cfg.database or archive_database.default_url(), cfg.database_timeout)
    except (ValueError, archive_database.ArchiveUnavailable) as exc:
        raise ConfigError(f"GATEWAY_DATABASE: {exc}") from None
    try:
        if cfg.player_keys:
            PlayerKeys.parse(cfg.player_keys)
    except PlayerIdError as exc:
        raise ConfigError(f"GATEWAY_PLAYER_KEYS: {exc}") from None
    if cfg.port:
        port_is_free(cfg.host, cfg.port)
    if cfg.metrics_port:
        port_is_free(cfg.host, cfg.metrics_port)
    if cfg.token_keys:
        KeyRing.parse(cfg.token_keys)  # fail now, not in every worker
    elif cfg.dev_token_key:
        # One key for this run, shared by every worker (a per-worker key would fail half the calls).
        environ["STATE_TOKEN_KEYS"] = KeyRing.generate("dev")
        cfg = from_env(environ)
        log.warning("sealed mode uses a random key made for this run: tokens die with the process; "
                    "set STATE_TOKEN_KEYS in production")
    return cfg, bool(args.dev)


def port_is_free(host: str, port: int) -> None:
    """ConfigError naming the address when something already listens there.

    The workers bind with SO_REUSEPORT (api_gateway/gunicorn_conf.py), and so would a
    second gateway started by mistake on the same port: the kernel would then share the
    connections between the two, silently. A bind without SO_REUSEPORT fails on a port
    taken that way (or any other way), so it is tried first and released at once.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            raise ConfigError(f"cannot listen on {where}: {exc.strerror or exc} (is another gateway running "
                              "there? choose a free port with --port or GATEWAY_PORT)") from None


def ready_line(url: str) -> str:
    """What a person reads once the gateway serves (`url` is http://host:port): the browser table
    and the API docs."""
    return f"Play in a browser at {url}/play; the API and its docs are at {url}/docs"


def _run_dev(cfg: GatewayConfig) -> int:
    from werkzeug.serving import make_server

    from api_gateway.app import create_app
    from api_gateway.metrics import serve

    server = make_server(cfg.host, cfg.port, create_app(cfg), threaded=True)
    host, port = server.socket.getsockname()[:2]
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    metrics = None if cfg.metrics_port is None else serve(cfg.host, cfg.metrics_port)
    print(json.dumps({"http": address, "metrics": metrics}), flush=True)
    log.warning("Flask development server: not for production")
    log.info("%s", ready_line(f"http://{address}"))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _run_gunicorn() -> int:
    from gunicorn.app.wsgiapp import WSGIApplication

    sys.argv = ["domino serve gateway", "-c", "python:api_gateway.gunicorn_conf"]
    try:
        WSGIApplication("%(prog)s").run()
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Process entry point; exit status 2 for unusable settings."""
    try:
        cfg, dev = prepare(sys.argv[1:] if argv is None else argv)
    except (ConfigError, KeyRingError) as exc:
        print(f"domino serve gateway: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=cfg.log_level, stream=sys.stderr,
                        format="[%(asctime)s] [%(process)d] [%(levelname)s] %(name)s: %(message)s")
    if not dev:
        try:
            import gunicorn  # noqa: F401
        except ImportError:
            log.warning("gunicorn is not installed: running Flask's development server")
            dev = True
    return _run_dev(cfg) if dev else _run_gunicorn()
