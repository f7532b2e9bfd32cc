"""Osel, the donkey (RULES.md O): preset `osel` (seed 000, first rules).

A double lead is the centre of a cross; doubles may close their arm and several
doubles may go down in one move. Scores go through the opening rule (13) into
written points; the first side to reach the target is the donkey. Fish scoring
has three conventions; a tie for the highest feeds the eggs pot.
"""
from __future__ import annotations

from typing import Any, Final

from . import options as opt
from .family import Family, MatchEnd, RoundContext, RoundResult, holder_of_first
from .layout import CROSS, Layout
from .ledger import Ledger, single_highest
from .options import OptionValue
from .tiles import DOUBLE_OF, tile_id

#: O lead: 1-1, 2-2 ... 6-6, 0-0; with no double anywhere 0-1, then ascending 0-2, 1-2, 0-3, 1-3, 2-3, ...
OSEL_ORDER: Final = tuple(DOUBLE_OF[v] for v in (1, 2, 3, 4, 5, 6, 0)) + tuple(
    tile_id(a, b) for b in range(1, 7) for a in range(b)
)


class Osel(Family):
    code = "O"
    closing = True
    multi_doubles = True
    score_is_written = True
    blocked_ending = "fish"
    specs = {s.name: s for s in (
        opt.HAND_SIZE,
        opt.lead_option("osel"),
        opt.boneyard_reserve_option("boneyard tiles that may never be drawn: "
                                    "0 (Весь), 1 (Без одной), 2 (Без двух)"),
        opt.TEAMS,
        opt.FISH_WITHOUT_DOUBLE,
        opt.fish_scoring_option("own_to_loser", "own", "all_to_loser"),
        opt.OPEN_THRESHOLD,
        opt.TARGET,
    )}

    def __init__(self, options: dict[str, OptionValue], players: int) -> None:
        super().__init__(options, players)
        self.shape = CROSS
        self.teams = bool(options["teams"])
        self.fish_without_double = bool(options["fish_without_double"])
        self.reserve = int(options["boneyard_reserve"])

    def lead(self, ctx: RoundContext, hands: list[int]) -> tuple[int, int]:
        return holder_of_first(OSEL_ORDER, hands)

    def new_layout(self) -> Layout:
        return Layout(CROSS)

    def combo_allowed(self, chosen: list[Any], layout: Layout) -> bool:
        """Any two or more doubles, each on a different open arm showing its number."""
        return len(chosen) >= 2

    def finish_round(
        self, ledger: Ledger, how: str, hands: list[int], out: list[int], last_placer: int | None,
        layout: Layout | None,
    ) -> RoundResult:
        """O scoring per side: the losers' points (or the fish convention) through the opening
        rule, ties into the eggs pot; the first side at the target is the donkey."""
        threshold = int(self.options["open_threshold"])
        ending = self.ending_name(how, layout)
        points = [self.hand_points(h) for h in hands]
        sides = self.sides
        side_points = [0] * sides
        for seat, p in enumerate(points):
            side_points[self.side_of(seat)] += p
        winner: int | None = None
        gains: dict[int, int] = {}
        if ending == "out":
            winner = self.side_of(out[0])
            for side in range(sides):
                if side != winner:
                    gains[side] = side_points[side]
        else:
            convention = self.options["fish_scoring"]
            top = single_highest(side_points)
            if convention == "own":
                gains = dict(enumerate(side_points))
            elif top is None:
                ledger.feed_pot(sum(side_points))
            elif convention == "own_to_loser":
                gains[top] = side_points[top]
            else:  # all_to_loser
                gains[top] = sum(side_points)
        # Eggs go to the side with the single highest points among those scoring this round
        # (seed 000: "to whoever loses in the next round").
        scorers = sorted(gains)
        top = single_highest([side_points[s] for s in scorers]) if scorers else None
        if ledger.pot and top is not None:
            gains[scorers[top]] += ledger.take_pot()
        if winner is not None and not ledger.opened(winner):
            ledger.forget(winner)
        for side, gain in gains.items():
            ledger.score_with_opening(side, gain, threshold)
        target = int(self.options["target"])
        losers = [s for s, w in enumerate(ledger.written) if w >= target]
        end = MatchEnd(losers, [s for s in range(sides) if s not in losers], []) if losers else None
        return RoundResult(ending, winner, last_placer, points, out, match_end=end)


PRESETS: Final[dict[str, dict[str, Any]]] = {
    "osel": dict(
        family=Osel,
        description="Osel (donkey): a cross from a double lead, doubles close arms, first to 101 loses (RULES.md O)",
        players=(2, 4),
        defaults={
            "hand_size": "seven", "lead": "osel", "boneyard_reserve": 0, "teams": False,
            "fish_without_double": False, "fish_scoring": "own_to_loser", "open_threshold": 13,
            "target": 101,
        },
    ),
}
