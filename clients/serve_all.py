"""`domino serve all`: the engine (one or more replicas) and the gateway, as separate processes.

What `make run` starts. Defaults: engine gRPC on 127.0.0.1:50051 with metrics on
9101, gateway on 8080 (gunicorn) with metrics on 9102. With ``--engines N`` it starts N engine
replicas (the first on the given ports, the others on free ones) and points the
gateway at all of them (``ipv4:127.0.0.1:p1,127.0.0.1:p2``; the gateway's
channel balances round-robin). Sealed mode works out of the box: without
STATE_TOKEN_KEYS a random key is made for this run.

Each child runs in its own session, so a Ctrl-C reaches only this process,
which forwards one SIGTERM to every child and waits for them to stop (the
engine and gunicorn both drain gracefully). A child that dies is started again
on the same ports (the gateway's engine list stays right, and meanwhile it sends
every call to the engines that are up); one that dies more than
`MAX_RESTARTS` times within `RESTART_WINDOW` seconds stops everything, exit status 1.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import IO

START_TIMEOUT = 30.0
STOP_TIMEOUT = 25.0
MAX_RESTARTS = 5
RESTART_WINDOW = 60.0
_POLL = 0.2


@dataclass
class Child:
    """One started service, the address it printed, and how to start it again."""

    name: str
    proc: subprocess.Popen[str]
    address: dict[str, str | None]
    argv: list[str] = field(default_factory=list)
    restarts: list[float] = field(default_factory=list)


class StartError(RuntimeError):
    """A child did not print its address line in time (or exited)."""


def _env_default(name: str, default: str) -> str:
    text = os.environ.get(name, "").strip()
    return text or default


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0..65535; 0 picks a free one)")
    return port


def _metrics_port(text: str) -> int | None:
    return None if text.strip().lower() == "off" else _port(text)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="domino serve all",
        description="Start the gRPC engine and the REST gateway locally, as separate processes.",
        epilog="Each flag falls back to the environment variable in brackets, then to the default. "
               "Other settings of the engine and the gateway come from their own environment variables "
               "(docs/grpc.md, docs/rest.md), which reach both services unchanged.")
    p.add_argument("--host", default=_env_default("DOMINO_HOST", "127.0.0.1"),
                   help="address every service binds [DOMINO_HOST, 127.0.0.1]")
    p.add_argument("--engine-port", type=_port, default=_env_default("ENGINE_PORT", "50051"),
                   help="gRPC port of the first engine, 0 for a free one [ENGINE_PORT, 50051]")
    p.add_argument("--engine-metrics-port", type=_metrics_port, default=_env_default("ENGINE_METRICS_PORT", "9101"),
                   help="Prometheus port of the first engine, 0 for a free one, off for none "
                        "[ENGINE_METRICS_PORT, 9101]")
    p.add_argument("--engines", type=int, default=1, help="engine replicas, balanced round-robin; the others "
                                                          "take free ports [1]")
    p.add_argument("--port", type=_port, default=_env_default("GATEWAY_PORT", "8080"),
                   help="gateway HTTP port, 0 for a free one [GATEWAY_PORT, 8080]")
    p.add_argument("--public-url", metavar="URL", default=None,
                   help="the address people reach the gateway at (http://192.168.1.20:8080 for friends on the "
                        "same network, with --host 0.0.0.0): the base of its invite links "
                        "[GATEWAY_PUBLIC_URL, the address it listens on]")
    p.add_argument("--gateway-metrics-port", type=_metrics_port,
                   default=_env_default("GATEWAY_METRICS_PORT", "9102"),
                   help="Prometheus port of the gateway, 0 for a free one, off for none [GATEWAY_METRICS_PORT, 9102]")
    p.add_argument("--workers", type=int, default=_env_default("GATEWAY_WORKERS", "2"),
                   help="gateway worker processes [GATEWAY_WORKERS, 2]")
    return p


def _read_address(name: str, proc: subprocess.Popen[str], timeout: float = START_TIMEOUT) -> dict[str, str | None]:
    """The JSON line a service prints once it listens."""
    stdout: IO[str] | None = proc.stdout
    assert stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stdout], [], [], _POLL)
        if ready:
            line = stdout.readline()
            if not line:
                break
            line = line.strip()
            if line.startswith("{"):
                found: dict[str, str | None] = json.loads(line)
                return found
        if proc.poll() is not None:
            break
    raise StartError(f"{name} did not start (exit status {proc.poll()}); see its messages above")


def _start(name: str, argv: list[str], env: dict[str, str]) -> Child:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        return Child(name, proc, _read_address(name, proc), argv)
    except StartError:
        _stop([Child(name, proc, {})])
        raise


def _port_of(address: str | None) -> str:
    return "0" if not address else address.rsplit(":", 1)[1]


def _engine_argv(host: str, port: str, metrics_port: str) -> list[str]:
    # -P: the working directory must not come before PYTHONPATH (build/compiled)
    return [sys.executable, "-P", "-m", "engine_service", "--host", host, "--port", port,
            "--metrics-port", metrics_port]


def gateway_argv(args: argparse.Namespace, engines: Sequence[str]) -> list[str]:
    """The gateway's command line: this command's flags that are the gateway's, and its engines' addresses."""
    return [sys.executable, "-m", "api_gateway", "--host", args.host, "--port", str(args.port),
            "--metrics-port", "off" if args.gateway_metrics_port is None else str(args.gateway_metrics_port),
            "--engine", engine_target(engines), "--workers", str(args.workers),
            *(["--public-url", args.public_url] if args.public_url else [])]


def _restart(child: Child, env: dict[str, str]) -> Child | None:
    """`child`, dead, started again with the same command on the same ports; None when it keeps dying."""
    now = time.monotonic()
    recent = [t for t in child.restarts if now - t < RESTART_WINDOW]
    if len(recent) >= MAX_RESTARTS:
        return None
    if child.name.startswith("engine"):  # the ports it got (port 0 picked free ones): the gateway's list names them
        argv = _engine_argv(child.argv[child.argv.index("--host") + 1], _port_of(child.address.get("grpc")),
                            _port_of(child.address.get("metrics")) if child.address.get("metrics") else "off")
    else:
        argv = child.argv
    restarted = _start(child.name, argv, env)
    restarted.argv = child.argv if not child.name.startswith("engine") else argv
    restarted.restarts = [*recent, now]
    return restarted


def _stop(children: Sequence[Child]) -> None:
    """SIGTERM every child still running, wait for all, SIGKILL what is left after the timeout."""
    for child in children:
        if child.proc.poll() is None:
            child.proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    for child in children:
        try:
            child.proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.proc.kill()
            child.proc.wait()
        if child.proc.stdout is not None:
            child.proc.stdout.close()


def engine_target(addresses: Sequence[str]) -> str:
    """One engine: its address; several: an ipv4: list the gateway's channel balances over."""
    if len(addresses) == 1:
        return addresses[0]
    return "ipv4:" + ",".join(addresses)


def dev_token_keys(kid: str = "dev") -> str:
    """A fresh STATE_TOKEN_KEYS value (``kid:base64key``, one random 256-bit key; docs/operations.md)."""
    return f"{kid}:{base64.b64encode(os.urandom(32)).decode('ascii')}"


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.engines < 1:
        print("domino serve all: --engines must be at least 1", file=sys.stderr)
        return 2
    stop_requested: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop_requested.append(signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    env = dict(os.environ)
    if not env.get("STATE_TOKEN_KEYS"):
        env["STATE_TOKEN_KEYS"] = dev_token_keys()  # this run only: tokens die with it
    children: list[Child] = []
    try:
        for i in range(args.engines):
            port = args.engine_port if i == 0 else 0
            metrics_port = ("off" if args.engine_metrics_port is None else args.engine_metrics_port) if i == 0 else 0
            children.append(_start(f"engine {i + 1}", _engine_argv(args.host, str(port), str(metrics_port)), env))
        engines = [str(c.address["grpc"]) for c in children]
        children.append(_start("gateway", gateway_argv(args, engines), env))
    except StartError as exc:
        print(f"domino serve all: {exc}", file=sys.stderr)
        _stop(children)
        return 1

    for child in children[:-1]:
        metrics = f"http://{child.address['metrics']}/metrics" if child.address.get("metrics") else "off"
        print(f"{child.name}: grpc {child.address['grpc']}, metrics {metrics}")
    gateway = f"http://{children[-1].address['http']}"
    gateway_metrics = children[-1].address.get("metrics")
    print(f"gateway: {gateway}, metrics {f'http://{gateway_metrics}/metrics' if gateway_metrics else 'off'}")
    print(f"Point a browser at {gateway}/play to play, {gateway}/docs for the API   (Ctrl-C stops everything)",
          flush=True)

    status = 0
    while not stop_requested and status == 0:
        for i, child in enumerate(children):
            if child.proc.poll() is None or stop_requested:
                continue
            code = child.proc.returncode
            if child.proc.stdout is not None:
                child.proc.stdout.close()
            try:
                again = _restart(child, env)
            except StartError as exc:
                print(f"domino serve all: {child.name} exited with status {code} and could not start again: "
                      f"{exc}; stopping", file=sys.stderr)
                status = 1
                break
            if again is None:
                print(f"domino serve all: {child.name} exited with status {code}, {MAX_RESTARTS} times within "
                      f"{RESTART_WINDOW:.0f} s; stopping", file=sys.stderr)
                status = 1
                break
            children[i] = again
            print(f"domino serve all: {child.name} exited with status {code}; started again "
                  f"(pid {again.proc.pid})", file=sys.stderr, flush=True)
        time.sleep(_POLL)
    _stop(children)
    return status
