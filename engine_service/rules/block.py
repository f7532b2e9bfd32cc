"""The plain block game (RULES.md BL): preset `block`.

Built to agree move for move with OpenSpiel's `python_block_dominoes` for two
players: 7 tiles each, nothing drawn, seat 0 leads any tile, a seat that cannot
play passes, and the hand ends when a seat goes out or nobody can play. The
seat with the fewest pips left scores the others' pips; equal lowest scores 0.
A block match is that one hand.
"""
from __future__ import annotations

from typing import Any, Final

from . import options as opt
from .family import Family, MatchEnd, RoundContext, RoundResult
from .layout import Layout
from .ledger import Ledger
from .tiles import ALL_TILES


class Block(Family):
    code = "BL"
    draws = False
    specs = {s.name: s for s in (opt.HAND_SIZE, opt.lead_option("seat0"))}

    def lead(self, ctx: RoundContext, hands: list[int]) -> tuple[int, int]:
        return 0, ALL_TILES

    def finish_round(
        self, ledger: Ledger, how: str, hands: list[int], out: list[int], last_placer: int | None,
        layout: Layout | None,
    ) -> RoundResult:
        """BL: the lowest hand scores the others' pips (a tie for lowest: nobody); the hand ends the match."""
        points = [self.hand_points(h) for h in hands]
        ending = self.ending_name(how, layout)
        low = min(points)
        lowest = [s for s, p in enumerate(points) if p == low]
        winner = lowest[0] if len(lowest) == 1 else None
        if winner is not None:
            ledger.add_score(winner, sum(points) - low)
        winners = [] if winner is None else [winner]
        losers = [] if winner is None else [s for s in range(self.players) if s != winner]
        return RoundResult(ending, winner, last_placer, points, out, match_end=MatchEnd(losers, winners, []))


PRESETS: Final[dict[str, dict[str, Any]]] = {
    "block": dict(
        family=Block,
        description="Block: 7 tiles each, no drawing, pass when unable; one hand (RULES.md BL, OpenSpiel's block dominoes)",
        players=(2, 4),
        defaults={"hand_size": "seven", "lead": "seat0"},
    ),
}
