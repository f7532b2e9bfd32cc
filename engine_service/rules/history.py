"""The action log a state carries, so that a match's record can be written from any state (issue 18).

A state holds the present (hands, layout, ledger), not how it came to be: the
layout keeps no draws, passes or seats, and earlier rounds keep only their
results. So `Match` and `Kingdomino` keep a log, one string per thing that
changed the match, in the order it happened; replaying the log from the start
gives the state again (`engine_service.records` does, and checks it):

- ``new`` (a match as `new` makes it), or ``new {json}``: a matching game's
  ``setup`` or a Kingdomino game's explicit ``deal``, compact JSON;
- ``deal`` (the next round dealt from the seed) or ``deal {json}`` (an explicit
  deal: ``hands``, ``boneyard`` in draw order, ``leader`` when given);
- an action in FORMAT.md notation, canonical (``3-6@E``, ``draw``, ``pass``,
  ``pick 3``, ``place 17 1,0 E``, ``discard 17``);
- ``settle {json}`` (``ending``, ``hands``, ``last_placer``), ``timeout N``.

An empty log means the history is unknown: a state written before states
carried one, or a match longer than `MAX_LOG` entries (it stops logging rather
than growing a sealed token without bound). The log is checked here only for
its shape (a list of short strings, each one line); whether it reproduces the
state is the records' check, made when a record is written.

An entry is never empty and never holds a newline: the payloads are compact
JSON (`json.dumps` escapes a newline inside a string), the actions canonical
notation. So the log travels as one string, its entries joined by "\n"
(`MatchState.log`, `KingdominoState.log`: one field to read; with a field per
entry the log was nearly half the cost of decoding a whole match's state), and
a record's text form keeps one entry per line.
"""
from __future__ import annotations

import json
from typing import Any

from .errors import MalformedError

#: Entries a log holds at most; a match that would go past it keeps no history from then on.
MAX_LOG = 4000
#: Characters of one entry at most (an explicit deal or settle is about 300).
MAX_ENTRY = 2000


def entry(verb: str, payload: Any = None) -> str:
    """``verb`` alone, or followed by its payload as compact JSON."""
    if payload is None:
        return verb
    return verb + " " + json.dumps(payload, separators=(",", ":"), sort_keys=True)


def append(log: list[str], item: str) -> None:
    """Add `item` to a known log (an unknown, empty one stays empty); past `MAX_LOG` the log is dropped."""
    if not log:
        return
    if len(log) >= MAX_LOG:
        log.clear()
        return
    log.append(item)


def split(item: str) -> tuple[str, Any]:
    """An entry's verb and payload (None when it has none); MalformedError if the payload is not JSON."""
    verb, _, rest = item.partition(" ")
    if not rest or verb not in ("new", "deal", "settle"):
        return item, None
    try:
        return verb, json.loads(rest)
    except ValueError:
        raise MalformedError(f"log entry {item[:40]!r}: its payload is not JSON") from None


def _plain(value: list[Any]) -> bool:
    """Every item a string of 1..`MAX_ENTRY` characters without a newline (`value` not empty)."""
    try:
        text = "\n".join(value)
    except TypeError:  # an item that is not a string
        return False
    # The newlines are the joints, no entry is empty (no joint at an end, no two together), and
    # the longest entry is short enough (no entry is longer than the whole).
    return (text.count("\n") == len(value) - 1 and bool(text) and text[0] != "\n" and text[-1] != "\n"
            and "\n\n" not in text and (len(text) <= MAX_ENTRY or max(map(len, value)) <= MAX_ENTRY))


def check_log(value: object, what: str = "state.log") -> list[str]:
    """A state's log: a list of at most `MAX_LOG` lines (non-empty, no newline) of at most `MAX_ENTRY` characters.

    The common case, a list of plain strings, is checked in a few passes over the
    whole list; only a log that fails them is walked entry by entry to name the first
    bad one.
    """
    if not isinstance(value, list):
        raise MalformedError(f"{what} must be a list of strings")
    if len(value) > MAX_LOG:
        raise MalformedError(f"{what} holds more than {MAX_LOG} entries")
    if value and not _plain(value):
        for i, item in enumerate(value):
            if not isinstance(item, str) or not 0 < len(item) <= MAX_ENTRY or "\n" in item:
                raise MalformedError(f"{what}[{i}] must be one line of 1..{MAX_ENTRY} characters")
    if value and not (value[0] == "new" or value[0].startswith("new ")):
        raise MalformedError(f"{what}[0] must be the match's start ('new' or 'new {{...}}')")
    return list(value)


__all__ = ["MAX_ENTRY", "MAX_LOG", "append", "check_log", "entry", "split"]
