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
- ``settle {json}`` (``ending``, ``hands``, ``last_placer``), ``timeout N``;
- an exit of the match (`exits`, issue 37): ``resign N``, ``gone N``, ``abort N``.

A matching game's state keeps only the entries of its current round (issue 27):
when a round ends, the entries up to its end leave the state (`Match.shed`, which
the call that ended the round answers as its ``record_lines``), and the state
keeps their count (`log_count`) and a digest chaining them (`chain`: blake2b-16
over the digest before and each line), so that the lines given back later
(``prior``) are checked exactly against the state before a record is written. A
call's cost so does not grow with the match. Kingdomino's log is one bounded
game: it stays whole (its count 0).

An empty log with no count means the history is unknown: a state written before
states carried one, or a match longer than `MAX_LOG` entries (it stops logging
rather than writing records longer than a record holds). The log is checked here only for
its shape (a list of short strings, each one line); whether it reproduces the
state is the records' check, made when a record is written.

An entry is never empty and never holds a newline: the payloads are compact
JSON (`json.dumps` escapes a newline inside a string), the actions canonical
notation. So the log travels as one string, its entries joined by "\n"
(`MatchState.log`, `KingdominoState.log`: one field to read; with a field per
entry the log was nearly half the cost of decoding a whole match's state), and
a record's text form keeps one entry per line.

The current round's moves after its deal are most often each a pass, a draw or
a play of the layout's next tiles: a match holds them so, a step code a move
(`MatchState.log_steps`, as the state travels: proto ``log_steps``), and writes
their text only when the log is read (`unstep`). A move that is not one (or an
entry after the deal that is no move, ``timeout N``, an exit) turns the round's moves
back into text for the rest of the round (`steps_of` finds the same form in a
log that arrives as text).
"""
from __future__ import annotations

import json
from hashlib import blake2b
from typing import Any, Final

from .errors import MalformedError
from .notation import Placement, format_placement

#: Entries a log holds at most; a match that would go past it keeps no history from then on.
MAX_LOG: Final = 4000
#: Characters of one entry at most (an explicit deal or settle is about 300).
MAX_ENTRY: Final = 2000


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


#: Bytes of the digest of the entries that left a state (`chain`).
DIGEST_SIZE: Final = 16


def chain(digest: bytes, lines: list[str]) -> bytes:
    """The digest of the entries before (`digest`, b"" for none) followed by `lines`: each line chained
    on its own, so that it does not matter in which calls they left the state."""
    for line in lines:
        digest = blake2b(digest + line.encode(), digest_size=DIGEST_SIZE).digest()
    return digest


#: Step codes (`MatchState.log_steps`): a pass, a draw; a play of k tiles is k + 1 (one tile: 2).
PASS_STEP: Final = 0
DRAW_STEP: Final = 1
#: What `play_step` answers for a play whose text is not its tiles' (the move stays text).
NO_STEP: Final = -1
#: Tiles one step code holds at most (it is one byte; a round's layout holds far fewer).
MAX_STEP_TILES: Final = 250


def is_deal(item: str) -> bool:
    """Whether `item` is a round's deal (``deal`` or ``deal {json}``): the round's moves follow it."""
    return item == "deal" or item.startswith("deal ")


def play_step(item: str, placements: list[Placement], start: int) -> int:
    """The step code of the play logged as `item` that laid ``placements[start:]``, when `item` is their
    text as a layout's entries write it (`format_placement`, joined by "+"); `NO_STEP` when it is not."""
    n = len(placements) - start
    if n == 1:
        return 2 if format_placement(placements[start]) == item else NO_STEP
    if 0 < n <= MAX_STEP_TILES and "+".join([format_placement(p) for p in placements[start:]]) == item:
        return n + 1
    return NO_STEP


def unstep(codes: list[int], placements: list[Placement]) -> list[str]:
    """The log entries of step `codes`, their plays read in order from the round's `placements` (which
    the codes' plays lay first)."""
    lines: list[str] = []
    k = 0
    for code in codes:
        if code == PASS_STEP:
            lines.append("pass")
        elif code == DRAW_STEP:
            lines.append("draw")
        elif code == 2:  # one tile, as most plays are: no "+" to join
            lines.append(format_placement(placements[k]))
            k += 1
        else:
            n = code - 1
            lines.append("+".join([format_placement(p) for p in placements[k:k + n]]))
            k += n
    return lines


def steps_of(log: list[str], count: int, placements: list[Placement] | None) -> tuple[list[str], list[int]] | None:
    """A log that arrives as text, as a match holds it: its entries up to the current round's deal and a
    step code a move after it, when every entry after the deal is a pass, a draw or a play of the layout's
    next tiles and they lay the whole layout (`placements`, None when no round is dealt); None when it is
    not so (the log stays text). With no deal in it, a log of a round whose deal left it (`count` above 0)
    is all moves."""
    if placements is None:
        return None
    at = len(log) - 1
    while at >= 0 and not is_deal(log[at]):
        at -= 1
    if at < 0 and count == 0:
        return None
    codes: list[int] = []
    k = 0
    for line in log[at + 1:]:
        if line == "pass":
            codes.append(PASS_STEP)
        elif line == "draw":
            codes.append(DRAW_STEP)
        else:  # a play of the layout's next tiles, as many as the text names, or no step
            code = play_step(line, placements[k:k + line.count("+") + 1], 0)
            if code == NO_STEP:
                return None
            codes.append(code)
            k += code - 1
    if k != len(placements):
        return None
    return log[:at + 1], codes


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


def check_log(value: object, what: str = "state.log", whole: bool = True, moves: int = 0) -> list[str]:
    """A state's log: a list of at most `MAX_LOG` lines (non-empty, no newline) of at most `MAX_ENTRY` characters.
    `moves`: entries after these that come as step codes (`MatchState.log_steps`: lines by their making).

    The common case, a list of plain strings, is checked in a few passes over the
    whole list; only a log that fails them is walked entry by entry to name the first
    bad one.
    """
    if not isinstance(value, list):
        raise MalformedError(f"{what} must be a list of strings")
    if len(value) + moves > MAX_LOG:
        raise MalformedError(f"{what} holds more than {MAX_LOG} entries")
    if value and not _plain(value):
        for i, item in enumerate(value):
            if not isinstance(item, str) or not 0 < len(item) <= MAX_ENTRY or "\n" in item:
                raise MalformedError(f"{what}[{i}] must be one line of 1..{MAX_ENTRY} characters")
    starts = bool(value) and (value[0] == "new" or value[0].startswith("new "))
    if (value or moves) and whole and not starts:
        raise MalformedError(f"{what}[0] must be the match's start ('new' or 'new {{...}}')")
    if starts and not whole:
        raise MalformedError(f"{what}[0]: the match's start, but entries have left the log before it")
    return list(value)


def check_prior(prior: object, count: int, digest: bytes, what: str = "prior") -> list[str]:
    """The entries that left a state (`count` of them, chained to `digest`), as given back by a caller:
    refused unless they are exactly those (MalformedError saying why)."""
    if count == 0:
        if prior:
            raise MalformedError(f"{what}: this state's log is whole (no entry has left it): give no prior lines")
        return []
    if prior is None:
        raise MalformedError(f"{what}: required: this state keeps only its current round's log; give the {count} "
                             "earlier lines the answers returned as record_lines (docs/records.md)")
    if not isinstance(prior, list) or not all(isinstance(x, str) for x in prior):
        raise MalformedError(f"{what} must be a list of strings (the record_lines of earlier answers, in order)")
    if len(prior) != count:
        raise MalformedError(f"{what}: {len(prior)} lines, but {count} left this state's log")
    if chain(b"", prior) != digest:
        raise MalformedError(f"{what}: these lines are not the ones that left this state's log (their digest "
                             "differs): give the record_lines of this match's answers, in order")
    return list(prior)


__all__ = ["DIGEST_SIZE", "DRAW_STEP", "MAX_ENTRY", "MAX_LOG", "MAX_STEP_TILES", "NO_STEP", "PASS_STEP", "append", "chain",
           "check_log", "check_prior", "entry", "is_deal", "play_step", "split", "steps_of", "unstep"]
