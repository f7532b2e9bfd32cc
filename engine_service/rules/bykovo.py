"""Bykovo house rules (RULES.md B): preset `bykovo` (seed 000, "Быковское домино").

Four seats, no boneyard, the holder of 0-0 leads it, and any seat may pass
whenever it likes. The first seat out wins, and the circle is completed up to
the seat before the leader; otherwise the round ends when nobody can play or
after three full circles of passes, won by the seat that placed the last tile.
Round points go into a running total; a plain match is a four-player
micro-tournament: it ends when a seat's total reaches 100, and that seat is out.

*Decision*: a blocked round settled from hands alone (no layout) is a fish when
exactly one number is missing from every hand (then it must show at both ends),
else a sortir.
"""
from __future__ import annotations

from typing import Any, Final

from . import options as opt
from .errors import MalformedError
from .family import Family, MatchEnd, RoundContext, RoundResult, holder_of_first
from .layout import Layout
from .ledger import Ledger
from .options import OptionValue
from .tiles import DOUBLE_OF, NUMBER_MASK

#: Three full circles of consecutive passes end the round (B).
PASS_LIMIT_CIRCLES: Final = 3
#: The total that puts a participant out, by the number of participants at the start (B).
LIMITS: Final = {4: 100, 5: 75, 6: 60, 7: 50}


def sports_places(points: list[int], first: int) -> list[int]:
    """Places: `first` is 1st, the rest by ascending points, equal points sharing (1, 2, 2, 4)."""
    places = [0] * len(points)
    places[first] = 1
    others = sorted((p, s) for s, p in enumerate(points) if s != first)
    for i, (p, s) in enumerate(others):
        if i and p == others[i - 1][0]:
            places[s] = places[others[i - 1][1]]
        else:
            places[s] = i + 2
    return places


class Bykovo(Family):
    code = "B"
    draws = False
    voluntary_pass = True
    many_out = True
    specs = {s.name: s for s in (opt.HAND_SIZE, opt.lead_option("zero-double"), opt.MISDEAL,
                                 opt.VOLUNTARY_PASS)}

    def __init__(self, options: dict[str, OptionValue], players: int) -> None:
        super().__init__(options, players)
        self.voluntary_pass = bool(options["voluntary_pass"])

    def lead(self, ctx: RoundContext, hands: list[int]) -> tuple[int, int]:
        return holder_of_first((DOUBLE_OF[0],), hands)

    # ------------------------------------------------------------ the end of a round

    def _last_of_circle(self, leader: int) -> int:
        """The seat before the leader, whose turn completes a circle."""
        return (leader - 1) % self.players

    def round_ends_when_out(self, leader: int, seat: int, out: int) -> bool:
        """Only when the circle is complete: the winner, or a later seat, sits before the leader."""
        return seat == self._last_of_circle(leader) or out == self.players

    def round_ends_after_turn(self, leader: int, seat: int, out: int) -> bool:
        """Once a seat is out, the round ends with the turn of the seat before the leader."""
        return out > 0 and seat == self._last_of_circle(leader)

    def passes_end_round(self, passes: int) -> bool:
        """Three full circles of consecutive passes."""
        return passes >= PASS_LIMIT_CIRCLES * self.players

    def ending_name(self, how: str, layout: Layout | None) -> str:
        if how == "out":
            return "out"
        if layout is None:
            return "sortir"
        shown = {v for v in layout.end if v >= 0}
        if len(shown) == 1:
            v = shown.pop()
            if layout.on_table & NUMBER_MASK[v] == NUMBER_MASK[v]:
                return "fish"
        return "sortir"

    def finish_round(
        self, ledger: Ledger, how: str, hands: list[int], out: list[int], last_placer: int | None,
        layout: Layout | None,
    ) -> RoundResult:
        """B: the first seat out, else the last placer, wins; the others' hand points go into
        their running totals, with sports places; a total at the limit is out of the match."""
        if out:
            ending = "out"
            winner = out[0]
        else:
            if layout is None:
                missing = [v for v in range(7) if not any(h & NUMBER_MASK[v] for h in hands)]
                ending = "fish" if len(missing) == 1 else "sortir"
            else:
                ending = self.ending_name(how, layout)
            if last_placer is None:
                raise MalformedError("bykovo: a blocked round is won by the seat that placed the last tile: give last_placer")
            winner = last_placer
        points = [0 if s == winner else self.hand_points(h) for s, h in enumerate(hands)]
        places = sports_places(points, winner)
        for s, p in enumerate(points):
            ledger.add_score(s, p)
        scores = ledger.scores
        limit = LIMITS[self.players] if self.players in LIMITS else 100
        losers = [s for s, total in enumerate(scores) if total >= limit]
        end: MatchEnd | None = None
        if losers:
            best = min(scores)
            end = MatchEnd(losers, [s for s, total in enumerate(scores) if total == best], [])
        return RoundResult(ending, winner, last_placer, points, out, places, match_end=end)


PRESETS: Final[dict[str, dict[str, Any]]] = {
    "bykovo": dict(
        family=Bykovo,
        description="Bykovo house rules: 4 seats, 0-0 leads, voluntary pass, fish or sortir; first to 100 is out (RULES.md B)",
        players=(4, 4),
        defaults={"hand_size": "seven", "lead": "zero-double", "misdeal": "five-doubles",
                  "voluntary_pass": True},
    ),
}
