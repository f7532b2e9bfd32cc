"""The exits of a match (issue 37): how a seat ends it before its rules do, other than by its clock.

- ``resign``: the seat gives up; its side loses. Where the variant has a timeout rule (Kozel's
  source formula, RULES.md K; Kingdomino's forfeit) it is scored exactly as that seat's timeout;
  elsewhere its side loses and, when there are two sides, the other one wins (no rating points).
- ``gone``: the seat was gone and the others claimed the win: scored exactly as its ``resign``.
- ``abort``: the match ends with no result: no winners, no losers, no rating. Who may abort when
  (before every person moved) is the gateway's to decide; the rules take it at any time before the end.

Each is a step of the log (``resign N``, ``gone N``, ``abort N``, as ``timeout N``) and reports an
event of its own (`EVENT_TYPES`: ``resigned``, ``gone``, ``aborted``, with the seat) before the
match's end. Kept apart from `Match` and `Kingdomino` so that both, the records and the faces name
the same words.
"""
from __future__ import annotations

from typing import Final

from .errors import MalformedError, one_of

RESIGN: Final = "resign"
GONE: Final = "gone"
ABORT: Final = "abort"
#: The exits, as a call's ``how`` and the log's verb name them.
HOWS: Final = (RESIGN, GONE, ABORT)
#: The event each exit reports first (its seat: ``seat``, Kingdomino's ``player``).
EVENT_TYPES: Final = {RESIGN: "resigned", GONE: "gone", ABORT: "aborted"}
#: What Kingdomino's ``decided_by`` says after each exit.
DECIDED_BY: Final = {RESIGN: "resign", GONE: "gone", ABORT: "aborted"}


def check_how(how: object) -> str:
    """`how`, one of `HOWS`, or MalformedError."""
    if not isinstance(how, str) or how not in HOWS:
        raise MalformedError(f"how: {one_of(how, HOWS)}")
    return how


def exit_step(how: str, seat: int) -> str:
    """The log's entry for an exit: ``resign 1``."""
    return f"{how} {seat}"


__all__ = ["ABORT", "DECIDED_BY", "EVENT_TYPES", "GONE", "HOWS", "RESIGN", "check_how", "exit_step"]
