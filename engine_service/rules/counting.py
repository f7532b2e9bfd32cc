"""The counting games: Threes and Fives (TF), fives-and-threes, All Threes (A3), All Fives (A5).

After every play the open-end count T (layout.py) may score in play; at the end
of a hand the winner (the seat that went out, else the lowest hand) scores a
hand bonus from the others' pips. Scores run per side (seat, or team with
`teams`) up to a target.

*Decision* (RULES.md says "game to 251", "won at exactly 61"): the first side
to reach the target wins at once, in play (the hand is then abandoned) or with
the hand bonus. With `exact_target`, points that would take a side past the
target are not taken, in play or at the end of a hand.
"""
from __future__ import annotations

from typing import Any, ClassVar, Final

from . import options as opt
from .deal import SplitMix64, derive_seed
from .family import NON_DOUBLES_DESCENDING, Family, MatchEnd, RoundContext, RoundResult, holder_of_first
from .layout import LINE, SPINNER, Layout
from .ledger import Ledger
from .options import OptionValue
from .tiles import ALL_TILES, DOUBLE_OF

HIGHEST_DOUBLE_FIRST: Final = tuple(DOUBLE_OF[v] for v in range(6, -1, -1)) + NON_DOUBLES_DESCENDING


def round_to_nearest(n: int, k: int) -> int:
    """n rounded to the nearest multiple of k (halves up): 26 -> 27 for 3, 26 -> 25 for 5."""
    return (2 * n + k) // (2 * k) * k


class Counting(Family):
    """TF: in play T scores when a multiple of 3 and/or 5; the winner takes the others' pips."""

    code: ClassVar[str] = "TF"
    counts = True
    #: Which multiples score in play.
    multiples: ClassVar[tuple[int, ...]] = (3, 5)

    specs = {s.name: s for s in (
        opt.HAND_SIZE,
        opt.lead_option("lot", "highest-double"),
        opt.SPINNER,
        opt.SPINNER_ENDS,
        opt.SPINNER_COUNTS,
        opt.BONEYARD_RESERVE,
        opt.DRAW_WHEN_ABLE,
        opt.TEAMS,
        opt.SCORING,
        opt.TARGET,
        opt.EXACT_TARGET,
    )}

    def __init__(self, options: dict[str, OptionValue], players: int) -> None:
        super().__init__(options, players)
        self.teams = bool(options.get("teams", False))
        spinner = options.get("spinner", "none")
        self.shape = LINE if spinner == "none" else SPINNER
        self.all_spinners = spinner == "all-doubles"
        self.until_both = options.get("spinner_ends", "open-sides") == "until-both-sides"
        self.spinner_counts = bool(options.get("spinner_counts", True))
        reserve = options.get("boneyard_reserve", 0)  # absent where nothing is drawn
        self.reserve = (2 if players == 2 else 1) if reserve == "auto" else int(reserve)
        self.draw_when_able = bool(options.get("draw_when_able", False))
        self.by_multiples = options.get("scoring", "total") == "multiples"
        self.target = int(options["target"])
        self.exact = bool(options.get("exact_target", False))

    def new_layout(self) -> Layout:
        return Layout(self.shape, self.all_spinners, self.until_both, self.spinner_counts)

    # ------------------------------------------------------------ lead

    def lead(self, ctx: RoundContext, hands: list[int]) -> tuple[int, int]:
        if self.options.get("lead") == "highest-double":
            return holder_of_first(HIGHEST_DOUBLE_FIRST, hands)
        return self._lot(ctx), ALL_TILES

    def _lot(self, ctx: RoundContext) -> int:
        """The lead by lot: drawn from the match seed for this round (seat 0 without a seed)."""
        if ctx.seed is None:
            return 0
        return SplitMix64(derive_seed(ctx.seed, ctx.round_number + 1, 0x1EAD)).below(self.players)

    def lead_given(self, ctx: RoundContext, hands: list[int], leader: int) -> tuple[int, int]:
        if self.options.get("lead") == "highest-double":
            return self.lead(ctx, hands)
        return leader, ALL_TILES

    def lead_mask(self, ctx: RoundContext, hands: list[int], leader: int) -> int:
        if self.options.get("lead") == "highest-double":
            return super().lead_mask(ctx, hands, leader)
        return ALL_TILES

    # ------------------------------------------------------------ scoring

    def in_play_points(self, count: int) -> int:
        """RULES.md TF: T scores when a multiple of 3 or 5 (both together: 30 -> 60)."""
        if count <= 0:
            return 0
        points = 0
        for k in self.multiples:
            if count % k == 0:
                points += count // k if self.by_multiples else count
        return points

    def credit(self, ledger: Ledger, side: int, points: int) -> int:
        """Add points to a side's score, honouring exact_target; returns what was taken."""
        if self.exact and ledger.scores[side] + points > self.target:
            return 0
        ledger.add_score(side, points)
        return points

    def hand_bonus(self, own: int, others: int) -> int:
        """TF: the winner scores the sum of its opponents' pips."""
        return others

    def finish_round(
        self, ledger: Ledger, how: str, hands: list[int], out: list[int], last_placer: int | None,
        layout: Layout | None,
    ) -> RoundResult:
        """The winning side (out, else the lowest hand) takes the hand bonus; reaching the target ends the match."""
        points = [self.hand_points(h) for h in hands]
        ending = self.ending_name(how, layout)
        winner_seat = self._winner_seat(ending, points, out)
        winner: int | None = None
        if winner_seat is not None:
            winner = self.side_of(winner_seat)
            own = points[winner_seat]
            others = sum(p for s, p in enumerate(points) if self.side_of(s) != winner)
            self.credit(ledger, winner, self.end_bonus(ending, own, others))
        return RoundResult(ending, winner, last_placer, points, out, match_end=self._check_match(ledger))

    def end_bonus(self, ending: str, own: int, others: int) -> int:
        return self.hand_bonus(own, others)

    def _winner_seat(self, ending: str, points: list[int], out: list[int]) -> int | None:
        """The seat that went out, else the lowest hand (a tie between sides: nobody)."""
        if ending == "out" and out:
            return out[0]
        low = min(points)
        lowest = [s for s, p in enumerate(points) if p == low]
        if len({self.side_of(s) for s in lowest}) > 1:
            return None
        return lowest[0]

    def _check_match(self, ledger: Ledger) -> MatchEnd | None:
        """The side that has reached the target wins (scores only ever cross one side at a time)."""
        scores = ledger.scores
        if max(scores) < self.target:
            return None
        best = max(scores)
        winners = [s for s, v in enumerate(scores) if v == best]
        losers = [s for s in range(len(scores)) if s not in winners]
        return MatchEnd(losers, winners, [])

    def after_play(self, ledger: Ledger, seat: int, points: int) -> tuple[int, MatchEnd | None]:
        """Credit in-play points to the seat's side; reaching the target ends the match at once."""
        taken = self.credit(ledger, self.side_of(seat), points)
        return taken, self._check_match(ledger)


class FivesAndThrees(Counting):
    """The English pub game: one point per multiple, knock instead of draw, 1 for going out, exactly 61."""

    code = "TF"
    draws = False
    # Nothing is ever drawn, so the drawing options do not apply.
    specs = {name: spec for name, spec in Counting.specs.items()
             if name not in ("boneyard_reserve", "draw_when_able")}

    def end_bonus(self, ending: str, own: int, others: int) -> int:
        return 1 if ending == "out" else 0

    def _winner_seat(self, ending: str, points: list[int], out: list[int]) -> int | None:
        if ending == "out" and out:
            return out[0]
        return None


class AllThrees(Counting):
    """A3: only multiples of 3 score; the lightest hand wins round3(others - own) / 3."""

    code = "A3"
    multiples = (3,)
    specs = {**{name: spec for name, spec in Counting.specs.items()
                if name not in ("teams", "lead", "boneyard_reserve", "draw_when_able")},
             "lead": opt.lead_option("lot")}

    def hand_bonus(self, own: int, others: int) -> int:
        return round_to_nearest(others - own, 3) // 3


class AllFives(Counting):
    """A5 (Muggins): only multiples of 5 score; the winner scores round5(others - own) / 5."""

    code = "A5"
    multiples = (5,)
    specs = {**{name: spec for name, spec in Counting.specs.items()
                if name not in ("boneyard_reserve", "draw_when_able", "lead")},
             "lead": opt.lead_option("lot")}

    def hand_bonus(self, own: int, others: int) -> int:
        return round_to_nearest(others - own, 5) // 5


_COMMON: Final = {"spinner_ends": "open-sides", "spinner_counts": True, "scoring": "total", "exact_target": False}

PRESETS: Final[dict[str, dict[str, Any]]] = {
    "threes-fives": dict(
        family=Counting,
        description="Threes and Fives (Sterling): multiples of 3 and 5 score in play, game to 251 (RULES.md TF)",
        players=(2, 4),
        defaults={"hand_size": "by-players", "lead": "lot", "spinner": "first-double",
                  "boneyard_reserve": 0, "draw_when_able": False, "teams": False, "target": 251,
                  **_COMMON},
    ),
    "fives-and-threes": dict(
        family=FivesAndThrees,
        description="Fives and threes, the English pub game: a point per multiple, knock, exactly 61 (RULES.md TF)",
        players=(2, 4),
        defaults={"hand_size": "by-players", "lead": "lot", "spinner": "none", "teams": False, "target": 61,
                  **_COMMON, "scoring": "multiples", "exact_target": True},
    ),
    "all-threes": dict(
        family=AllThrees,
        description="All Threes: multiples of 3 score in play, the lightest hand wins a bonus, game to 150 (RULES.md A3)",
        players=(2, 4),
        defaults={"hand_size": "five", "lead": "lot", "spinner": "first-double", "target": 150,
                  **_COMMON},
    ),
    "all-fives": dict(
        family=AllFives,
        description="All Fives (Fives-Up, Muggins): multiples of 5 score in play, game to 100 (RULES.md A5)",
        players=(2, 4),
        defaults={"hand_size": "by-players", "lead": "lot", "spinner": "first-double", "teams": False,
                  "target": 100, **_COMMON},
    ),
}

__all__ = ["AllFives", "AllThrees", "Counting", "FivesAndThrees", "PRESETS"]
