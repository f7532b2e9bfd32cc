"""Kozel, the goat (RULES.md K): presets `kozel` (seed 001) and `kozel-classic` (seed 003).

Line layout, must play or draw, a fish when blocked (or, with
`fish_without_double`, when both ends show a number whose six non-doubles are
all out). Hand points go through the remembered/written opening rule; a seat
reaching the target is the goat. The fish can be scored on everyone or on one
(`max_takes_all`, with ties feeding the eggs pot).
"""
from __future__ import annotations

from typing import Any, Final

from . import options as opt
from .family import (
    NON_DOUBLES_DESCENDING,
    Family,
    MatchEnd,
    RoundContext,
    RoundResult,
    holder_of_first,
    round_half_up_div,
)
from .layout import Layout
from .ledger import Ledger, single_highest
from .options import OptionValue
from .tiles import ALL_TILES, DOUBLE_OF, PIPS, bits

ZERO_ZERO: Final = DOUBLE_OF[0]
#: K rating: max(1, round((100 - score) / 10)) for every seat that did not lose (seed 001).
RATING_BASE: Final = 100

#: K first lead: 1-1, 2-2 ... 6-6, then 0-0; else the descending non-doubles.
ONE_ONE_UP: Final = tuple(DOUBLE_OF[v] for v in (1, 2, 3, 4, 5, 6, 0)) + NON_DOUBLES_DESCENDING
#: K classic: the highest double first.
HIGHEST_DOUBLE: Final = tuple(DOUBLE_OF[v] for v in (6, 5, 4, 3, 2, 1, 0)) + NON_DOUBLES_DESCENDING


class Kozel(Family):
    code = "K"
    names_next_leader = True
    score_is_written = True
    blocked_ending = "fish"
    specs = {s.name: s for s in (
        opt.HAND_SIZE,
        opt.lead_option("one-one-up", "highest-double"),
        opt.MISDEAL,
        opt.DOUBLE_PAIR,
        opt.ZERO_DOUBLE,
        opt.FISH_WITHOUT_DOUBLE,
        opt.fish_scoring_option("each", "max_takes_all"),
        opt.OPEN_THRESHOLD,
        opt.TARGET,
    )}

    def __init__(self, options: dict[str, OptionValue], players: int) -> None:
        super().__init__(options, players)
        self.multi_doubles = bool(options["double_pair"])
        self.fish_without_double = bool(options["fish_without_double"])
        self.draws = True

    # ------------------------------------------------------------ dealing and playing

    def lead(self, ctx: RoundContext, hands: list[int]) -> tuple[int, int]:
        if ctx.next_leader is not None and ctx.recorded:
            return ctx.next_leader, ALL_TILES
        order = ONE_ONE_UP if self.options["lead"] == "one-one-up" else HIGHEST_DOUBLE
        return holder_of_first(order, hands)

    def combo_allowed(self, chosen: list[Any], layout: Layout) -> bool:
        """K classic: exactly two doubles, one on each end of the line."""
        return len(chosen) == 2 and {c[1] for c in chosen} == {1, 3}

    # ------------------------------------------------------------ scoring

    def hand_points(self, hand: int) -> int:
        zero_rule = self.options["zero_double"]
        points = sum(PIPS[t] for t in bits(hand))
        if hand >> ZERO_ZERO & 1:
            if zero_rule == "twenty-five":
                points += 25
            elif zero_rule == "lone-ten" and hand == 1 << ZERO_ZERO:
                points += 10
        return points

    def finish_round(
        self, ledger: Ledger, how: str, hands: list[int], out: list[int], last_placer: int | None,
        layout: Layout | None,
    ) -> RoundResult:
        """K scoring: hand points through the opening rule, the fish on everyone or on one (with
        the eggs pot); the winner, else the fisherman, leads next; a seat at the target is the goat."""
        threshold = int(self.options["open_threshold"])
        ending = self.ending_name(how, layout)
        points = [self.hand_points(h) for h in hands]
        gains = points.copy()
        cleared: set[int] = set()
        if ending == "fish" and self.options["fish_scoring"] == "max_takes_all":
            total = sum(points)
            top = single_highest(points)
            gains = [0] * len(points)
            if top is None:
                ledger.feed_pot(total)
                scoring: list[int] = []
            else:
                gains[top] = total + ledger.take_pot()
                scoring = [top]
                cleared = {s for s in range(len(points)) if s != top}
        else:
            scoring = list(range(len(points)))
            top = single_highest(points)
            if ledger.pot and top is not None:
                gains[top] += ledger.take_pot()
        winner = out[0] if ending == "out" and out else None
        for seat in scoring:
            if seat == winner:
                if not ledger.opened(seat):
                    ledger.forget(seat)
                continue
            ledger.score_with_opening(seat, gains[seat], threshold)
        for seat in cleared:
            if not ledger.opened(seat):
                ledger.forget(seat)
        leader = winner if winner is not None else last_placer
        target = int(self.options["target"])
        losers = [s for s, w in enumerate(ledger.written) if w >= target]
        end = MatchEnd(losers, [], self._rating(ledger, losers)) if losers else None
        return RoundResult(ending, winner, last_placer, points, out, next_leader=leader, match_end=end)

    def _rating(self, ledger: Ledger, losers: list[int]) -> list[int]:
        """K rating: non-losers gain max(1, round((100 - score) / 10)), as the source writes it
        (whatever the target)."""
        return [
            0 if s in losers else max(1, round_half_up_div(RATING_BASE - w, 10))
            for s, w in enumerate(ledger.written)
        ]

    def timeout(self, ledger: Ledger, seat: int) -> MatchEnd:
        """K rating after a timeout: the seat loses and gains 0, the others gain
        max(1, round((its score - own) / 10))."""
        written = ledger.written
        rating = [
            0 if s == seat else max(1, round_half_up_div(written[seat] - w, 10))
            for s, w in enumerate(written)
        ]
        return MatchEnd([seat], [], rating)


PRESETS: Final[dict[str, dict[str, Any]]] = {
    "kozel": dict(
        family=Kozel,
        description="Kozel (goat), the Russian yard classic as played online (RULES.md K, seed 001)",
        players=(2, 4),
        defaults={
            "hand_size": "seven", "lead": "one-one-up", "misdeal": "five-doubles-or-six-of-a-number",
            "double_pair": False, "zero_double": "lone-ten", "fish_without_double": True,
            "fish_scoring": "each", "open_threshold": 13, "target": 101,
        },
    ),
    "kozel-classic": dict(
        family=Kozel,
        description="Kozel as in the classic rules: 5 tiles for 3-4 players, two doubles at once, 0-0 counts 25 (RULES.md K, seed 003)",
        players=(2, 4),
        defaults={
            "hand_size": "by-players", "lead": "highest-double", "misdeal": "none",
            "double_pair": True, "zero_double": "twenty-five", "fish_without_double": False,
            "fish_scoring": "each", "open_threshold": 13, "target": 101,
        },
    ),
}

__all__ = ["PRESETS", "Kozel"]
