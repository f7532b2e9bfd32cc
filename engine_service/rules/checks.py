"""Caller input read into plain values: integers in range, seats, lists of them, seeds, flags.

Both a match's calls (a seat named by `timeout`, a setup's points) and its
decoder (`match_form`) take values from whoever calls, so both check them here,
with the same words: each refusal is a `MalformedError` that starts with
`what`, the field as the caller named it (``state.round.to_move``,
``settle.last_placer``).
"""
from __future__ import annotations

from typing import Final

from .deal import MAX_SEED
from .errors import MalformedError

#: The largest magnitude any integer of a state may have (points, round numbers, counts).
INT_LIMIT: Final = 10**9


def check_seed(v: object, what: str) -> int | None:
    """A seed: an integer 0..2^64-1, or None."""
    if v is not None and (not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_SEED):
        raise MalformedError(f"{what} must be an integer in 0..2^64-1 or null")
    return v


def check_int(v: object, what: str) -> int:
    """An integer (not a bool) within `INT_LIMIT`."""
    if not isinstance(v, int) or isinstance(v, bool):
        raise MalformedError(f"{what} must be an integer, not {v!r}")
    if abs(v) > INT_LIMIT:
        raise MalformedError(f"{what} is out of range")
    return v


def check_nonneg(v: object, what: str) -> int:
    """`check_int`, and not negative."""
    v = check_int(v, what)
    if v < 0:
        raise MalformedError(f"{what} must not be negative")
    return v


def check_bool(v: object, what: str) -> bool:
    """true or false, nothing that merely converts to one."""
    if not isinstance(v, bool):
        raise MalformedError(f"{what} must be true or false")
    return v


def check_seat(v: object, players: int, what: str) -> int:
    """A seat 0..players-1."""
    v = check_int(v, what)
    if not 0 <= v < players:
        raise MalformedError(f"{what} must be a seat 0..{players - 1}, not {v}")
    return v


def check_seat_list(v: object, n: int, what: str) -> list[int]:
    """A list of distinct seats 0..n-1 (a new list)."""
    if not isinstance(v, list):
        raise MalformedError(f"{what} must be a list")
    if not v:
        return []
    result = [check_seat(x, n, what) for x in v]
    if len(set(result)) != len(result):
        raise MalformedError(f"{what} names a seat twice")
    return result


def check_int_list(v: object, n: int, what: str) -> list[int]:
    """A list of exactly `n` integers within `INT_LIMIT` (a new list)."""
    if not isinstance(v, list) or len(v) != n:
        raise MalformedError(f"{what} must list {n} integers")
    for x in v:
        if type(x) is not int or not -INT_LIMIT <= x <= INT_LIMIT:
            return [check_int(x, what) for x in v]  # names the bad item (or takes an int subclass)
    return v.copy()
