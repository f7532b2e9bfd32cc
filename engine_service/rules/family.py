"""What every matching-game family shares, and the hooks where they differ (RULES.md C).

A family (K, O, B, TF, A3, A5, BL) is a subclass of `Family` built from a
preset's resolved options and the player count. The round engine reads its
flags (draws, closing arms, voluntary pass ...) and calls its hooks for the
lead, the in-play score and the scoring of a finished round; adding a variant
is a new module plus a registry entry.

The families know nothing of `Match`: they are handed plain values (a
`RoundContext`, the `Ledger`, hands and counts) and return what happened (a
`RoundResult`, a `MatchEnd`), which `Match` records and reports. So the rules'
imports form a tree (tests/rules/test_import_tree.py).
"""
from __future__ import annotations

from typing import Any, ClassVar, Final

from .errors import MalformedError
from .layout import LINE, Layout
from .ledger import Ledger
from .options import OptionSpec, OptionValue
from .tiles import ALL_TILES, DOUBLE_MASK, NUMBER_MASK, PIPS, bits, tile_id

#: Descending order of non-doubles used by first-lead rules: 5-6, 4-6, ..., 0-6, 4-5, ...
NON_DOUBLES_DESCENDING: Final[tuple[int, ...]] = tuple(
    tile_id(a, b) for b in range(6, -1, -1) for a in range(b - 1, -1, -1)
)


def round_half_up_div(n: int, d: int) -> int:
    """round(n / d) with halves rounded up, in integers (exact for negative n too)."""
    return (2 * n + d) // (2 * d)


def hand_size_for(option: OptionValue, players: int) -> int:
    """RULES.md option `hand_size`."""
    if option == "seven":
        return 7
    if option == "five":
        return 5
    if option == "by-players":
        return 7 if players == 2 else 5
    if option == "five-six-seven":
        return {2: 7, 3: 6, 4: 5}[players]
    raise MalformedError(f"options.hand_size: unknown value {option!r}")  # pragma: no cover


def misdeal_rule(option: OptionValue, hands: list[int]) -> bool:
    """RULES.md option `misdeal`: does any hand force a redeal?"""
    if option == "none":
        return False
    for hand in hands:
        if (hand & DOUBLE_MASK).bit_count() >= 5:
            return True
        if option == "five-doubles-or-six-of-a-number":
            for v in range(7):
                if (hand & NUMBER_MASK[v]).bit_count() >= 6:
                    return True
    return False


def holder_of_first(order: tuple[int, ...], hands: list[int]) -> tuple[int, int]:
    """The seat holding the first tile of `order` that anyone holds, and that tile as a mask."""
    for tile in order:
        for seat, hand in enumerate(hands):
            if hand >> tile & 1:
                return seat, 1 << tile
    raise MalformedError("no seat holds a tile to lead")


# RoundContext, MatchEnd and RoundResult are values built once and read once, one of each per
# round. They are plain classes with __slots__ rather than dataclasses: compiled by mypyc a
# plain class is built natively in about 0.1 us, a dataclass through its generated (Python)
# __init__ in 0.6-0.9 us, a frozen one in 1.9 us; in pure Python 0.45 us, and 1.5-3.3 frozen.


class RoundContext:
    """What a family may know of the match when it names a round's lead (each family's lead rule).

    Plain values rather than the `Match`, so that the families sit below match.py.
    `round_number` is the number of rounds dealt when asked (the round being dealt is
    ``round_number + 1``); `next_leader` is the seat a K round's winner handed the lead to;
    `recorded` says whether the score table holds a round yet.
    """

    __slots__ = ("next_leader", "recorded", "round_number", "seed")

    def __init__(self, seed: int | None, round_number: int, next_leader: int | None, recorded: bool) -> None:
        self.seed = seed
        self.round_number = round_number
        self.next_leader = next_leader
        self.recorded = recorded


class MatchEnd:
    """How a match ends: the losing and the winning sides, and the rating where the variant
    has one (K; empty elsewhere). `Match` sorts the sides when it ends the match."""

    __slots__ = ("losers", "rating", "winners")

    def __init__(self, losers: list[int], winners: list[int], rating: list[int]) -> None:
        self.losers = losers
        self.winners = winners
        self.rating = rating


class RoundResult:
    """A finished round as its family scored it, for `Match` to record (C "Score table").

    By the time it is returned the family has updated the ledger (written,
    remembered, pot, running scores), so the row `Match` appends shows the totals
    after the round. `ending` is out, fish, blocked or sortir; `winner` a side
    (seat or team) or None; `round_points` and `places` are per seat (`places`: B
    only); `out` the seats that went out, in order. `next_leader` counts only for
    a family with `names_next_leader` (K), which then sets it even to None.
    `match_end` is set when the match ends with this round.
    """

    __slots__ = ("ending", "last_placer", "match_end", "next_leader", "out", "places", "round_points",
                 "winner")

    def __init__(
        self, ending: str, winner: int | None, last_placer: int | None, round_points: list[int],
        out: list[int], places: list[int] | None = None, next_leader: int | None = None,
        match_end: MatchEnd | None = None,
    ) -> None:
        self.ending = ending
        self.winner = winner
        self.last_placer = last_placer
        self.round_points = round_points
        self.out = out
        self.places = places
        self.next_leader = next_leader
        self.match_end = match_end


class Family:
    """Base of the matching-game families; subclasses set flags and override hooks."""

    code: ClassVar[str] = "?"
    specs: ClassVar[dict[str, OptionSpec]] = {}

    # Flags the round engine reads.
    draws = True                 # the boneyard is drawn from
    closing = False              # O: a double may close its arm
    multi_doubles = False        # several doubles in one move
    voluntary_pass = False       # B
    draw_when_able = False       # TF option
    fish_without_double = False  # K, O option
    counts = False               # TF, A3, A5: in-play scoring from the open-end count
    teams = False
    many_out = False             # B: several seats may go out in one round
    names_next_leader = False    # K: a round's winner (else the fisherman) leads the next one
    score_is_written = False     # K, O: the score players speak of is the written points (ledger.scores mirrors them)
    #: What a round that nobody went out of is called: "blocked", or "fish" (K, O).
    blocked_ending: ClassVar[str] = "blocked"

    def __init__(self, options: dict[str, OptionValue], players: int) -> None:
        self.options = options
        self.players = players
        self.hand_size = hand_size_for(options.get("hand_size", "seven"), players)
        self.reserve = 0
        self.shape = LINE

    # ------------------------------------------------------------ dealing

    @property
    def sides(self) -> int:
        """Seats, or teams when playing in teams: the length of the ledger's lists."""
        return 2 if self.teams else self.players

    def side_of(self, seat: int) -> int:
        return seat % 2 if self.teams else seat

    def validate(self, players: int) -> None:
        """Refuse option combinations the family cannot play (e.g. teams with 3 players)."""
        if self.teams and players != 4:
            raise MalformedError("options.teams: teams need exactly 4 players")

    def is_misdeal(self, hands: list[int]) -> bool:
        return misdeal_rule(self.options.get("misdeal", "none"), hands)

    def lead(self, ctx: RoundContext, hands: list[int]) -> tuple[int, int]:
        """(leader, mask of tiles it may lead) for a new round."""
        return 0, ALL_TILES

    def lead_given(self, ctx: RoundContext, hands: list[int], leader: int) -> tuple[int, int]:
        """The lead when a deal names its leader: only lot-based families take it."""
        return self.lead(ctx, hands)

    def lead_mask(self, ctx: RoundContext, hands: list[int], leader: int) -> int:
        """The tiles `leader` may lead with, for a stored round not yet led (decoding)."""
        seat, mask = self.lead(ctx, hands)
        if seat != leader:
            raise MalformedError(f"state.round.leader: {leader}, but the rules give the lead to seat {seat}")
        return mask

    def new_layout(self) -> Layout:
        return Layout(self.shape)

    # ------------------------------------------------------------ playing

    def combo_allowed(self, chosen: list[Any], layout: Layout) -> bool:
        """Whether these (tile, arm, flag) doubles may be played together."""
        return False

    def in_play_points(self, count: int) -> int:
        return 0

    def after_play(self, ledger: Ledger, seat: int, points: int) -> tuple[int, MatchEnd | None]:
        """Credit points `seat` scored in play to `ledger` (TF, A3, A5).

        Returns the points actually taken (exact_target may refuse them), and how
        the match ends now if it does.
        """
        return 0, None

    # The round's end hooks take the few numbers they read, not the `Round` itself, so that
    # the families stay below round.py: `leader` led the round, `seat` has just moved and
    # `out` seats have gone out so far (it among them when it has just gone out).

    def round_ends_when_out(self, leader: int, seat: int, out: int) -> bool:
        """Whether the round ends now that `seat` has played its last tile (yes, but for B)."""
        return True

    def round_ends_after_turn(self, leader: int, seat: int, out: int) -> bool:
        """Whether the round ends after `seat`'s turn although someone may still play (B)."""
        return False

    def passes_end_round(self, passes: int) -> bool:
        """Whether `passes` consecutive passes end the round (B), besides a blocked layout."""
        return False

    # ------------------------------------------------------------ scoring

    def hand_points(self, hand: int) -> int:
        """C "Hand points": the sum of pips left in a hand."""
        return sum(PIPS[t] for t in bits(hand))

    def ending_name(self, how: str, layout: Layout | None) -> str:
        """Name a finished round's ending: "out", or the family's word for blocked (`blocked_ending`)."""
        return "out" if how == "out" else self.blocked_ending

    def finish_round(
        self, ledger: Ledger, how: str, hands: list[int], out: list[int], last_placer: int | None,
        layout: Layout | None,
    ) -> RoundResult:
        """Score a finished round into `ledger` and return it for the score table.

        `how` is how the round stopped ("out", "blocked" or "fish-exhausted"; the
        family names the ending), `hands` what each seat holds, `out` the seats
        that went out, `layout` the table (None for a round settled from hands).
        """
        raise NotImplementedError

    def timeout(self, ledger: Ledger, seat: int) -> MatchEnd | None:
        """How the match ends when `seat` times out; None where the variant has no timeout
        rule (`Match` then refuses the call)."""
        return None

    @classmethod
    def has_timeout_rule(cls) -> bool:
        """Whether a seat's timeout ends the match here: a family with the rule defines `timeout`
        (K: RULES.md's timeout formula); listed as the variant's `timeout_rule`."""
        return cls.timeout is not Family.timeout


__all__ = [
    "NON_DOUBLES_DESCENDING",
    "Family",
    "MatchEnd",
    "RoundContext",
    "RoundResult",
    "holder_of_first",
    "round_half_up_div",
]
