"""The engine's error model: the one table between refusals and gRPC status codes.

A call to `domino.v1.Engine` or `domino.v1.JsonEngine` is refused in one of
three ways (docs/grpc.md "Error model"), each with its status code:

==========  ====================  =============================================
refusal     status code           meaning
==========  ====================  =============================================
MALFORMED   INVALID_ARGUMENT      the input cannot be understood (bad notation,
                                  unknown variant or option, inconsistent state)
ILLEGAL     FAILED_PRECONDITION   well formed, but the rules forbid it now
MISDEAL     FAILED_PRECONDITION   an explicit deal the variant's misdeal rule
                                  refuses (details start "misdeal:")
==========  ====================  =============================================

The engine maps the rules' exceptions to a refusal and the refusal to a status
(`status_of`); the REST gateway and the Python client map a status back
(`refusal_of`). Every other status is a failure of the service, not a refusal.

Two RESOURCE_EXHAUSTED answers are neither, and must not be read as "the
service is down" (`limit_of`):

==========  ====================  =============================================
limit       status code           meaning
==========  ====================  =============================================
BUSY        RESOURCE_EXHAUSTED    the engine's bots are all thinking for other
                                  calls (details start "busy:"): try again in a
                                  moment (the REST gateway's 429)
TOO_LARGE   RESOURCE_EXHAUSTED    the request or its answer is over a gRPC
                                  message limit (grpcio's "Sent/Received message
                                  larger than max"): the same call fails again
==========  ====================  =============================================

This module belongs to the contract (with engine.proto) and imports only
grpcio, so that the engine, the gateway and clients share it without importing
each other.
"""
from __future__ import annotations

import enum
import re
from typing import NamedTuple

import grpc

__all__ = ["BUSY_PREFIX", "MAX_DETAILS", "MISDEAL_PREFIX", "Limit", "Refusal", "Size", "busy_status", "limit_of",
           "refusal_of", "size_of", "status_code", "status_of"]

MISDEAL_PREFIX = "misdeal:"
BUSY_PREFIX = "busy:"
#: Details are cut to this many characters: a message may quote hostile input, and gRPC
#: carries it in a header that clients limit (8 KiB by default).
MAX_DETAILS = 500


class Refusal(enum.Enum):
    """Why the engine refused a call; the value is Replay's `error_kind` word."""

    MALFORMED = "malformed"
    ILLEGAL = "illegal"
    MISDEAL = "misdeal"


#: The table itself.
STATUS: dict[Refusal, grpc.StatusCode] = {
    Refusal.MALFORMED: grpc.StatusCode.INVALID_ARGUMENT,
    Refusal.ILLEGAL: grpc.StatusCode.FAILED_PRECONDITION,
    Refusal.MISDEAL: grpc.StatusCode.FAILED_PRECONDITION,
}
_DEFAULT_DETAILS = {Refusal.MALFORMED: "malformed request", Refusal.ILLEGAL: "illegal in this state",
                    Refusal.MISDEAL: "misdeal"}


_CODES: dict[int, grpc.StatusCode] = {code.value[0]: code for code in grpc.StatusCode}


def status_code(number: int) -> grpc.StatusCode:
    """The status a number on the wire names (a batch item's `code`, `JsonItemAnswer`); UNKNOWN for a number
    grpc does not know."""
    return _CODES.get(number, grpc.StatusCode.UNKNOWN)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_DETAILS else text[: MAX_DETAILS - 3] + "..."


def status_of(refusal: Refusal, message: str) -> tuple[grpc.StatusCode, str]:
    """The status code and details that carry `refusal` with its `message`."""
    text = message or _DEFAULT_DETAILS[refusal]
    if refusal is Refusal.MISDEAL and not text.startswith(MISDEAL_PREFIX):
        text = f"{MISDEAL_PREFIX} {text}"
    elif refusal is Refusal.ILLEGAL and text.startswith(MISDEAL_PREFIX):
        text = f"illegal: {text}"  # so that it does not read back as a misdeal
    return STATUS[refusal], _clip(text)


def refusal_of(code: grpc.StatusCode, details: str) -> Refusal | None:
    """The refusal a status stands for, or None when the status is a failure of the service."""
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return Refusal.MALFORMED
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return Refusal.MISDEAL if details.startswith(MISDEAL_PREFIX) else Refusal.ILLEGAL
    return None


class Limit(enum.Enum):
    """A RESOURCE_EXHAUSTED answer that is not an outage (module docstring)."""

    BUSY = "busy"
    TOO_LARGE = "too large"


# grpcio's words, on whichever side found the message too large: "SERVER: Sent message larger than
# max (2003 vs. 1000)", "CLIENT: Received message larger than max (703 vs. 500)", ...
_TOO_LARGE = re.compile(r"(SERVER|CLIENT): (Sent|Received) message larger than max \((\d+) vs\. (\d+)\)")


def busy_status(message: str) -> tuple[grpc.StatusCode, str]:
    """The status of a call refused because the engine's bots are busy."""
    return grpc.StatusCode.RESOURCE_EXHAUSTED, _clip(f"{BUSY_PREFIX} {message}")


def limit_of(code: grpc.StatusCode, details: str) -> Limit | None:
    """Which limit a RESOURCE_EXHAUSTED answer reports, if it is one of the table's."""
    if code != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    if details.startswith(BUSY_PREFIX):
        return Limit.BUSY
    if _TOO_LARGE.search(details):
        return Limit.TOO_LARGE
    return None


class Size(NamedTuple):
    """What was too large ("request" or "answer"), its size and the limit, in bytes."""

    what: str
    size: int
    limit: int


def size_of(details: str) -> Size | None:
    """The sizes a TOO_LARGE answer reports (None when the details give none)."""
    m = _TOO_LARGE.search(details)
    if m is None:
        return None
    side, verb, size, limit = m.groups()
    # The server receives requests and sends answers; the client the other way round.
    request = (side == "SERVER") == (verb == "Received")
    return Size("request" if request else "answer", int(size), int(limit))
