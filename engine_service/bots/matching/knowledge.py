"""What one seat knows of a matching round, read from its view and nothing else (RULES.md C).

`read_view` turns a seat's view (`Match.view(seat)`, optionally with a
``history`` of the round's events as that seat saw them) into `Knowledge`: the
family, the layout, the seat's own hand, the unseen tiles, how many tiles each
other seat and the boneyard hold, and what the passes and draws of the history
allow of each seat's hand (`deals.SeatDeals`, exact).

Why the history: the view itself shows the table, not who passed or drew when,
and those are what prove a number missing. The engine's events already say it
(``played`` with seat and action, ``passed``, ``drew`` with the tile hidden from
other seats), so a view may carry them as ``history``; without it the bot still
plays, knowing only the counts. See docs/bots.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...rules.errors import RulesError
from ...rules.family import Family, RoundContext
from ...rules.layout import Layout
from ...rules.notation import CENTER, LEAD, PLAY, Move, parse_placement
from ...rules.registry import make_family
from ...rules.tiles import ALL_TILES, NUMBER_MASK, parse_hand
from .deals import Entry, SeatDeals
from .numbers import ends_numbers, numbers_tiles

#: A seat's play as the history shows it: (seat, layout before it, move, tiles it played from then on).
Choice = tuple[int, Layout, Move, int]

__all__ = ["Choice", "Knowledge", "ViewError", "ends_numbers", "numbers_tiles", "read_view"]


@dataclass(slots=True)
class Knowledge:
    """A seat's knowledge of the round in play (everything a bot decides from)."""

    variant: str
    family: Family
    players: int
    seat: int
    hand: int
    layout: Layout
    hand_sizes: list[int]
    boneyard_size: int
    to_move: int
    legal: list[Move]
    legal_text: list[str]
    scores: list[int]
    #: Tiles this seat has not seen: in other hands or in the boneyard.
    unseen: int
    #: Per other seat, what its history allows of its hand (`deals.SeatDeals`); None for this seat.
    seats: list[SeatDeals | None]
    #: Whether a history was given and agrees with the layout (else nothing is proven).
    history_used: bool = False
    leader: int | None = None
    last_placer: int | None = None
    passes: int = 0
    out: list[int] = field(default_factory=list)
    #: Tiles the first lead proves were in no hand at the deal (RULES.md K, O, B).
    barred: int = 0
    #: The other seats' plays whose hand at the time a world tells exactly (no draw of that seat since):
    #: (seat, the layout before the play, the move, the tiles the seat played from then on, this one
    #: included). What `likelihood` weighs a world by.
    choices: list[Choice] = field(default_factory=list)

    def possible(self, seat: int) -> int:
        """The unseen tiles some hand of `seat` consistent with its history holds (bit set)."""
        deals = self.seats[seat]
        return 0 if deals is None else deals.possible

    def voids(self, seat: int) -> int:
        """The numbers (7-bit set) `seat` is proven not to hold at all: every unseen tile showing
        the number is one no hand consistent with the seat's history holds (numbers with no unseen
        tile left are nobody's to hold, and not listed)."""
        deals = self.seats[seat]
        if deals is None or deals.hand_size == 0:
            return 0
        v = 0
        for n in range(7):
            showing = NUMBER_MASK[n] & self.unseen
            if showing and not showing & deals.possible:
                v |= 1 << n
        return v


class ViewError(ValueError):
    """The view is not a seat's view of a round in play."""


def read_view(view: dict[str, Any], to_move: bool = True) -> Knowledge:
    """Read a seat's view (see the module docstring); ViewError when it cannot be decided from.

    With `to_move` (what a decision needs) the seat must be the one to move; the
    coach reads a view whatever the turn (then `legal` is empty).
    """
    try:
        _preset, family, _eff = make_family(view["variant"], view["players"], view.get("options") or {})
        seat = view["seat"]
        players = int(view["players"])
        if not isinstance(seat, int) or not 0 <= seat < players:
            raise ViewError("the view has no seat: bots play a seat's view, not the public one")
        if not view.get("dealt") or view.get("round_over") or view.get("match_over"):
            raise ViewError("no round is being played in this view")
        hand = parse_hand(view["hand"], "view.hand")
        layout = family.new_layout()
        layout.replay([parse_placement(p, i == 0) for i, p in enumerate(view["layout"])])
        legal_text = list(view["legal"])
        hand_sizes = [int(x) for x in view["hand_sizes"]]
        boneyard_size = int(view["boneyard_size"])
    except (KeyError, TypeError) as exc:
        raise ViewError(f"not a seat's view of a matching game: {exc}") from None
    if to_move and (view["to_move"] != seat or not legal_text):
        raise ViewError(f"seat {seat} is not to move in this view")
    unseen = ALL_TILES & ~hand & ~layout.on_table
    if unseen.bit_count() != sum(hand_sizes) - hand_sizes[seat] + boneyard_size:
        raise ViewError("the view's counts do not add up to the tiles it does not show")
    scores = list((view.get("ledger") or {}).get("scores") or [0] * family.sides)
    know = Knowledge(
        variant=str(view["variant"]), family=family, players=players, seat=seat, hand=hand,
        layout=layout, hand_sizes=hand_sizes, boneyard_size=boneyard_size, to_move=int(view["to_move"]),
        legal=[Move.parse(a) for a in legal_text], legal_text=legal_text, scores=scores,
        unseen=unseen, seats=[None] * players,
    )
    timelines: list[list[Entry]] = [[] for _ in range(players)]
    history = view.get("history")
    if isinstance(history, list):
        timelines = _read_history(know, history, view) or timelines
    for s in range(players):
        if s != seat:
            know.seats[s] = SeatDeals(timelines[s], hand_sizes[s], unseen, know.barred)
    return know


def _round_events(history: list[Any]) -> list[dict[str, Any]]:
    """The events since the last ``round_dealt`` (all of them when there is none)."""
    start = 0
    for i, e in enumerate(history):
        if isinstance(e, dict) and e.get("type") == "round_dealt":
            start = i + 1
    return [e for e in history[start:] if isinstance(e, dict)]


def _read_history(know: Knowledge, history: list[Any], view: dict[str, Any]) -> list[list[Entry]] | None:
    """Replay the round's plays to learn the ends at every pass and draw, and what each proves.

    The replay must end on the view's own layout; otherwise the history is not this
    round's (or not all of it) and is ignored: nothing is proven rather than something false.
    So is a history the rules refuse to replay: an action that is no action (`MalformedError`,
    a played event without one included) or one the layout does not take (`IllegalActionError`).
    """
    family = know.family
    layout = family.new_layout()
    # Per seat, in order: ("proof", numbers) at a forced pass or draw; ("draw", 0); ("play", tile).
    timeline: list[list[Entry]] = [[] for _ in range(know.players)]
    lead_tile: int | None = None
    leader: int | None = None
    last_placer: int | None = None
    passes = 0
    out: list[int] = []
    played_count = [0] * know.players
    drawn = [0] * know.players
    # Per play of another seat after the lead: (seat, its timeline length then, layout before, move).
    plays: list[tuple[int, int, Layout, Move]] = []
    try:
        for e in _round_events(history):
            kind = e.get("type")
            seat = e.get("seat")
            if kind not in ("played", "passed", "drew"):
                continue
            if not isinstance(seat, int) or not 0 <= seat < know.players:
                return None
            if kind == "played":
                move = Move.parse(e.get("action"))
                move_kind, placements = move
                if move_kind not in (LEAD, PLAY):
                    return None
                if move_kind == PLAY and seat != know.seat:
                    plays.append((seat, len(timeline[seat]), layout.copy(), move))
                for tile, arm, flag in placements:
                    if arm == CENTER:
                        leader = seat
                        lead_tile = tile
                        layout.lead(tile, flag)
                    else:
                        layout.attach(tile, arm, flag)
                    timeline[seat].append(("play", tile))
                    played_count[seat] += 1
                if family.hand_size + drawn[seat] == played_count[seat] and seat not in out:
                    out.append(seat)
                last_placer = seat
                passes = 0
            elif kind == "passed":
                passes += 1
                if not family.voluntary_pass:
                    timeline[seat].append(("proof", ends_numbers(layout)))
            else:
                if not family.draw_when_able:
                    timeline[seat].append(("proof", ends_numbers(layout)))
                timeline[seat].append(("draw", 0))
                drawn[seat] += 1
                passes = 0
    except RulesError:  # a history the rules do not replay is not this round's: prove nothing
        return None
    if layout.placements != know.layout.placements:
        return None
    dealt = family.hand_size
    for s in range(know.players):
        if dealt + drawn[s] - played_count[s] != know.hand_sizes[s]:
            return None  # the history is not the whole round
    know.history_used = True
    know.leader = leader
    know.last_placer = last_placer
    know.passes = passes
    know.out = out
    if leader is not None and lead_tile is not None:
        know.barred = lead_barred(know, view, leader, lead_tile)
    know.choices = _choices(plays, timeline)
    return timeline


def _choices(plays: list[tuple[int, int, Layout, Move]], timeline: list[list[Entry]]) -> list[Choice]:
    """The plays after which their seat never drew, each with the tiles that seat played from then on:
    a world's hand for the seat and those tiles are its hand at that play, exactly."""
    out: list[Choice] = []
    for seat, at, layout, move in plays:
        later = timeline[seat][at:]
        if any(kind == "draw" for kind, _v in later):
            continue
        played = 0
        for kind, tile in later:
            if kind == "play":
                played |= 1 << tile
        out.append((seat, layout, move, played))
    return out


def lead_barred(know: Knowledge, view: dict[str, Any], leader: int, lead_tile: int) -> int:
    """The tiles the round's first lead proves were in no hand at the deal (0 when the lead was free).

    Asked of the family's own lead rule, not a copy of it: with the led tile in the leader's
    hand, a tile u that would have taken the lead from any hand instead is one nobody held.
    The context is the round's as the view shows it (its number; a score table already
    written; the leader as the one the last round named), which is all a lead rule reads
    but the lot's seed, and a lot leads any tile.
    """
    history = (view.get("ledger") or {}).get("history")
    ctx = RoundContext(None, max(0, int(view.get("round_number") or 1) - 1), leader, bool(history))
    hands = [0] * know.players
    hands[leader] = 1 << lead_tile
    try:
        seat, mask = know.family.lead(ctx, hands)
    except RulesError:
        return 0
    if seat != leader or mask != 1 << lead_tile:
        return 0  # a free lead (any tile, or by lot): nothing is proven
    barred = 0
    other = (leader + 1) % know.players
    for u in range(28):
        if u == lead_tile:
            continue
        probe = hands.copy()
        probe[other] |= 1 << u
        try:
            _seat, mask = know.family.lead(ctx, probe)
        except RulesError:
            continue
        if mask == 1 << u:
            barred |= 1 << u
    return barred & ~know.hand

