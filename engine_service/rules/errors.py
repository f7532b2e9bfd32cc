"""The rules' two kinds of refusal, as in python-chess: bad input vs illegal here.

Each boundary maps them once: MalformedError -> gRPC INVALID_ARGUMENT -> HTTP
400; IllegalActionError -> FAILED_PRECONDITION -> HTTP 409.

A refusal that blames one field names it first, as ``path: why`` or ``path must ...``
(``options.target: ...``, ``state.round.hands[2]: ...``, ``players must be an integer``):
the gateway reports that path as the problem's `field`. `shown` quotes what the caller
sent as JSON, `one_of` with the values that would be accepted, `did_you_mean` offers the
closest known name.
"""
from __future__ import annotations

import difflib
import json
from collections.abc import Iterable


class RulesError(ValueError):
    """Base of every refusal by the rules library."""


class MalformedError(RulesError):
    """The input cannot be understood: bad notation, unknown option, corrupt state."""


class IllegalActionError(RulesError):
    """The input is well formed but the rules forbid it in this state."""


class MisdealError(IllegalActionError):
    """An explicit deal that the variant's misdeal rule refuses (RULES.md C "Deal")."""


def shown(value: object) -> str:
    """A caller's value in a message, as the JSON it would be (cut short: it may be anything a
    client sent); a list or a dict by its kind."""
    if value is None or isinstance(value, (bool, int, float, str)):
        try:
            text = json.dumps(value, ensure_ascii=False)
        except ValueError:  # an integer too long to write out
            text = "a long integer"
    elif isinstance(value, (list, tuple)):
        text = "an array"
    elif isinstance(value, dict):
        text = "an object"
    else:
        text = type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def one_of(value: object, choices: Iterable[object]) -> str:
    """'"x" is not one of "out", "fish"': the refused value and what would be accepted, as JSON."""
    return f"{shown(value)} is not one of {', '.join(json.dumps(c) for c in choices)}"


def did_you_mean(given: object, known: Iterable[str]) -> str:
    """'; did you mean "kozel"?' for the known name closest to `given` ('' when none is close)."""
    if not isinstance(given, str):
        return ""
    close = difflib.get_close_matches(given.lower(), list(known), n=1, cutoff=0.6)
    return f"; did you mean {json.dumps(close[0])}?" if close else ""
