"""The Python SDK of the domino engine (docs/sdk.md).

- `RestClient`: the REST gateway, transparent (`Match`) and sealed (`SealedMatch`)
  mode, computer opponents (`Bot`), problem details raised as typed exceptions
  (`clients.sdk.errors`), retries on 503, timeouts.
- `EngineClient`, `TypedEngine`: the gRPC engine, JSON face and typed face
  (`clients.sdk.grpc_client`; imported on first use, so the REST client needs no gRPC).
"""
from __future__ import annotations

from typing import Any

from clients.sdk import errors
from clients.sdk.errors import (
    ClientProblem,
    IllegalAction,
    Malformed,
    ProblemError,
    SealedForbidden,
    ServerProblem,
    StaleToken,
    TransportError,
    ValidationFailed,
)
from clients.sdk.rest import LEVELS, Bot, Legal, Match, ReplayResult, RestClient, SealedMatch

__all__ = [
    "LEVELS", "Bot", "ClientProblem", "EngineClient", "IllegalAction", "Legal", "Malformed", "Match",
    "ProblemError", "ReplayResult", "RestClient", "SealedForbidden", "SealedMatch", "ServerProblem",
    "StaleToken", "TransportError", "TypedEngine", "ValidationFailed", "errors",
]


def __getattr__(name: str) -> Any:
    if name in ("EngineClient", "TypedEngine"):
        from clients.sdk import grpc_client

        return getattr(grpc_client, name)
    raise AttributeError(name)
