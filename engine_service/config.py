"""Engine server settings: command-line flags over environment variables over defaults.

Every setting has a flag and an environment variable (the container way), and
a flag wins over its variable. `--port 0` / `--metrics-port 0` bind free ports;
the server prints the bound addresses on one stdout line.
"""
from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

DEFAULT_PORT = 50051
DEFAULT_METRICS_PORT = 9464
DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024
#: Answers may be larger than requests (a long match's record, a replay's events): gRPC's usual
#: receive limit, which the gateway's channel uses too.
DEFAULT_MAX_ANSWER_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_CALL_SECONDS = 30.0
OFF = -1

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Config:
    """Validated settings of one engine server process."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    metrics_port: int | None = DEFAULT_METRICS_PORT  # None: no metrics endpoint
    workers: int = 4
    max_concurrent_rpcs: int | None = None           # None: unbounded (queued in the pool)
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES  # largest request
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    bot_slots: int = 1                               # expert bot worker processes (engine_service.admission)
    max_call_seconds: float = DEFAULT_MAX_CALL_SECONDS  # a call's work stops there, whatever its deadline
    reflection: bool = True
    grace_seconds: float = 5.0
    shutdown_delay_seconds: float = 0.5   # NOT_SERVING while still serving: the gateway moves off first
    log_level: str = "INFO"
    log_calls: bool = True


def _env_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is outside 0..65535")
    return value


def _metrics_port(text: str) -> int:
    """A port, or OFF for 'off' (no metrics endpoint)."""
    if text.strip().lower() in ("off", "none", "-1"):
        return OFF
    return _port(text)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"{value} seconds is outside 0..3600")
    return value


def _call_seconds(text: str) -> float:
    value = float(text)
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{value} seconds is outside (0, 3600]")
    return value


def _level(text: str) -> str:
    level = text.strip().upper()
    if level not in logging.getLevelNamesMapping():
        raise argparse.ArgumentTypeError(f"unknown log level {text!r}")
    return level


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="domino serve engine",
        description="Run the stateless domino rules engine (gRPC domino.v1.Engine).",
        epilog="Each flag falls back to its environment variable, then to the default.",
    )
    p.add_argument("--host", help="address to bind [ENGINE_HOST, default 127.0.0.1; 0.0.0.0 in containers]")
    p.add_argument("--port", type=_port, help=f"gRPC port, 0 for a free one [ENGINE_PORT, {DEFAULT_PORT}]")
    p.add_argument("--metrics-port", type=_metrics_port,
                   help=f"Prometheus port, 0 for a free one, 'off' for none [ENGINE_METRICS_PORT, {DEFAULT_METRICS_PORT}]")
    p.add_argument("--workers", type=_positive, help="threads serving calls [ENGINE_WORKERS, 4]")
    p.add_argument("--max-concurrent-rpcs", type=_positive,
                   help="calls beyond this are refused RESOURCE_EXHAUSTED [ENGINE_MAX_CONCURRENT_RPCS, unbounded]")
    p.add_argument("--max-message-bytes", type=_positive,
                   help=f"largest request [ENGINE_MAX_MESSAGE_BYTES, {DEFAULT_MAX_MESSAGE_BYTES}]")
    p.add_argument("--max-answer-bytes", type=_positive,
                   help=f"largest answer [ENGINE_MAX_ANSWER_BYTES, {DEFAULT_MAX_ANSWER_BYTES}]")
    p.add_argument("--bot-slots", type=_positive,
                   help="worker processes for expert bot decisions; a client's expert suggestion or hints that "
                        "finds none free is refused RESOURCE_EXHAUSTED 'busy:' [ENGINE_BOT_SLOTS, 1]")
    p.add_argument("--max-call-seconds", type=_call_seconds,
                   help="the longest a call may work when its caller sets no deadline or a later one "
                        f"[ENGINE_MAX_CALL_SECONDS, {DEFAULT_MAX_CALL_SECONDS:g}]")
    p.add_argument("--reflection", action=argparse.BooleanOptionalAction, default=None,
                   help="serve gRPC server reflection [ENGINE_REFLECTION, true]")
    p.add_argument("--grace", type=_seconds,
                   help="seconds in-flight calls get to finish on shutdown [ENGINE_GRACE_SECONDS, 5]")
    p.add_argument("--shutdown-delay", type=_seconds,
                   help="seconds to keep serving after health turns NOT_SERVING, so load balancers "
                        "and the gateway notice [ENGINE_SHUTDOWN_DELAY_SECONDS, 0.5]")
    p.add_argument("--log-level", type=_level, help="DEBUG, INFO, WARNING, ERROR [LOG_LEVEL, INFO]")
    p.add_argument("--log-calls", action=argparse.BooleanOptionalAction, default=None,
                   help="one JSON log line per call at INFO [ENGINE_LOG_CALLS, true]")
    return p


def load(argv: Sequence[str], env: Mapping[str, str] | None = None) -> Config:
    """Parse flags, falling back to environment variables; exits with status 2 on bad input."""
    environ = os.environ if env is None else env
    p = parser()
    args = p.parse_args(list(argv))

    def pick(flag: T | None, var: str, convert: Callable[[str], T], default: T) -> T:
        if flag is not None:
            return flag
        text = environ.get(var, "")
        if text == "":
            return default
        try:
            return convert(text)
        except (ValueError, argparse.ArgumentTypeError) as exc:
            p.error(f"{var}={text!r}: {exc}")

    d = Config()
    metrics_port = pick(args.metrics_port, "ENGINE_METRICS_PORT", _metrics_port, DEFAULT_METRICS_PORT)
    return Config(
        host=pick(args.host, "ENGINE_HOST", str, d.host),
        port=pick(args.port, "ENGINE_PORT", _port, d.port),
        metrics_port=None if metrics_port == OFF else metrics_port,
        workers=pick(args.workers, "ENGINE_WORKERS", _positive, d.workers),
        max_concurrent_rpcs=pick(args.max_concurrent_rpcs, "ENGINE_MAX_CONCURRENT_RPCS", _positive, None),
        max_message_bytes=pick(args.max_message_bytes, "ENGINE_MAX_MESSAGE_BYTES", _positive,
                               d.max_message_bytes),
        max_answer_bytes=pick(args.max_answer_bytes, "ENGINE_MAX_ANSWER_BYTES", _positive, d.max_answer_bytes),
        bot_slots=pick(args.bot_slots, "ENGINE_BOT_SLOTS", _positive, d.bot_slots),
        max_call_seconds=pick(args.max_call_seconds, "ENGINE_MAX_CALL_SECONDS", _call_seconds,
                              d.max_call_seconds),
        reflection=pick(args.reflection, "ENGINE_REFLECTION", _env_bool, d.reflection),
        grace_seconds=pick(args.grace, "ENGINE_GRACE_SECONDS", _seconds, d.grace_seconds),
        shutdown_delay_seconds=pick(args.shutdown_delay, "ENGINE_SHUTDOWN_DELAY_SECONDS", _seconds,
                                    d.shutdown_delay_seconds),
        log_level=pick(args.log_level, "LOG_LEVEL", _level, d.log_level),
        log_calls=pick(args.log_calls, "ENGINE_LOG_CALLS", _env_bool, d.log_calls),
    )
