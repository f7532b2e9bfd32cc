"""Seats played by the computer, as a match or a game carries them (issue 15).

The rules only record which seats are bots and at what level; the engine plays
them (`engine_service.calls`), deciding from each bot seat's view alone
(`engine_service.bots`). At least one seat stays human: a match of bots alone
would play itself out in one call.
"""
from __future__ import annotations

from typing import Any, Final

from .errors import MalformedError, one_of

#: The levels a bot seat may have (`engine_service.bots.LEVELS` is the same list).
BOT_LEVELS: Final[tuple[str, ...]] = ("random", "greedy", "expert")


def check_bots(value: object, players: int, where: str) -> dict[int, str]:
    """``[{"seat": s, "level": l}, ...]`` as seat -> level, or MalformedError naming the entry."""
    if value is None:
        return {}
    if not isinstance(value, list):
        raise MalformedError(f"{where} must be a list of {{seat, level}}")
    bots: dict[int, str] = {}
    for i, entry in enumerate(value):
        if not isinstance(entry, dict) or set(entry) != {"seat", "level"}:
            raise MalformedError(f"{where}[{i}] must be an object with seat and level")
        seat, level = entry["seat"], entry["level"]
        if type(seat) is not int or not 0 <= seat < players:
            raise MalformedError(f"{where}[{i}].seat must be a seat 0..{players - 1}, not {seat!r}")
        if level not in BOT_LEVELS:
            raise MalformedError(f"{where}[{i}].level: {one_of(level, BOT_LEVELS)}")
        if seat in bots:
            raise MalformedError(f"{where}[{i}].seat: seat {seat} is named twice")
        bots[seat] = level
    if len(bots) >= players:
        raise MalformedError(f"{where}: at least one seat must be human (a match of bots alone plays itself)")
    return bots


def seat_bot(bots: dict[int, str], players: int, seat: object, level: object) -> dict[int, str]:
    """`bots` with `seat` played by the computer at `level` from now on, or by a person again
    (`level` None): a seat of an online table whose person left, or who came back (issue 24).
    MalformedError when the seat or level is not one, or when no seat would stay human."""
    if type(seat) is not int or not 0 <= seat < players:
        raise MalformedError(f"seat must be a seat 0..{players - 1}, not {seat!r}")
    changed = {s: lv for s, lv in bots.items() if s != seat}
    if level is None:
        return changed
    if level not in BOT_LEVELS:
        raise MalformedError(f"level: {one_of(level, BOT_LEVELS)}")
    changed[seat] = str(level)
    if len(changed) >= players:
        raise MalformedError(f"seat {seat} is the last one a person plays: a match of bots alone plays itself")
    return changed


def bots_to_list(bots: dict[int, str]) -> list[dict[str, Any]]:
    """The JSON form, by seat."""
    return [{"seat": seat, "level": bots[seat]} for seat in sorted(bots)]
