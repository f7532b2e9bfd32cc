"""The plain block game (RULES.md BL): preset `block`.

Built to agree move for move with OpenSpiel's `python_block_dominoes` for two
players: 7 tiles each, nothing drawn, seat 0 leads any tile, a seat that cannot
play passes, and the hand ends when a seat goes out or nobody can play. The
seat with the fewest pips left scores the others' pips; equal lowest scores 0.
A block match is that one hand.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import options as opt
from .events import Event
from .family import Family, RoundContext
from .layout import Layout
from .tiles import ALL_TILES

if TYPE_CHECKING:
    from .match import Match


class Block(Family):
    code = "BL"
    draws = False
    specs = {s.name: s for s in (opt.HAND_SIZE, opt.lead_option("seat0"))}

    def lead(self, ctx: RoundContext, hands: list[int]) -> tuple[int, int]:
        return 0, ALL_TILES

    def finish_round(
        self, match: Match, how: str, hands: list[int], out: list[int], last_placer: int | None,
        layout: Layout | None,
    ) -> list[Event]:
        points = [self.hand_points(h) for h in hands]
        ending = "out" if how == "out" else "blocked"
        low = min(points)
        lowest = [s for s, p in enumerate(points) if p == low]
        winner = lowest[0] if len(lowest) == 1 else None
        if winner is not None:
            match.ledger.add_score(winner, sum(points) - low)
        record = match.record_round(ending, winner, last_placer, points, out)
        events: list[Event] = [{"type": "round_ended", "record": record}]
        winners = [] if winner is None else [winner]
        losers = [] if winner is None else [s for s in range(self.players) if s != winner]
        events.extend(match.end_match(losers, winners, []))
        return events


PRESETS: dict[str, dict[str, Any]] = {
    "block": dict(
        family=Block,
        description="Block: 7 tiles each, no drawing, pass when unable; one hand (RULES.md BL, OpenSpiel's block dominoes)",
        players=(2, 4),
        defaults={"hand_size": "seven", "lead": "seat0"},
    ),
}
