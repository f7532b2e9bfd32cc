"""One round of a matching game: whose turn, what is legal, what an action does (RULES.md C).

`Round` is the hot path. Hands are bit sets, the boneyard is a list with the
next tile last, legal actions are built from precomputed strings, and an action
is validated completely before anything changes, so a refused action leaves the
round exactly as it was. Scoring a finished round belongs to the family
(`Family.finish_round`), not here.
"""
from __future__ import annotations

from .errors import IllegalActionError
from .events import Event
from .family import Family
from .layout import Layout
from .notation import (
    ARM_COUNT,
    ARM_NAMES,
    CANONICAL,
    CENTER,
    CLOSE_TEXT,
    DRAW,
    LEAD,
    LEAD_TEXT,
    MOVES,
    PASS,
    PLAY,
    PLAY_TEXT,
    Move,
)
from .tiles import DOUBLE_MASK, DOUBLE_OF, IS_DOUBLE, LOW, NAMES, NUMBER_MASK, OTHER, bits


class Round:
    """The state of a round and its transitions."""

    __slots__ = (
        "family", "players", "hands", "boneyard", "reserve", "layout", "leader", "to_move",
        "passes", "out", "last_placer", "last_score", "over", "ending", "winner",
        "round_points", "places", "lead_mask", "held",
    )

    def __init__(
        self,
        family: Family,
        hands: list[int],
        boneyard_draw_order: list[int],
        leader: int,
        lead_mask: int,
        layout: Layout | None = None,
    ) -> None:
        self.family = family
        self.players = len(hands)
        self.hands = hands
        self.held = 0                               # union of all hands
        for hand in hands:
            self.held |= hand
        self.boneyard = boneyard_draw_order[::-1]  # next tile to draw is last
        self.reserve = min(family.reserve, len(boneyard_draw_order))
        self.layout = family.new_layout() if layout is None else layout
        self.leader = leader
        self.to_move = leader
        self.lead_mask = lead_mask
        self.passes = 0
        self.out: list[int] = []
        self.last_placer: int | None = None
        self.last_score = 0
        self.over = False
        self.ending: str | None = None
        self.winner: int | None = None
        self.round_points: list[int] | None = None
        self.places: list[int] | None = None

    def copy(self) -> Round:
        # Through the constructor, not `Round.__new__`: compiled by mypyc, `__new__` runs `__init__`.
        new = Round(self.family, self.hands.copy(), [], self.leader, self.lead_mask, self.layout.copy())
        new.held = self.held
        new.boneyard = self.boneyard.copy()
        new.reserve = self.reserve
        new.to_move = self.to_move
        new.passes = self.passes
        new.out = self.out.copy()
        new.last_placer = self.last_placer
        new.last_score = self.last_score
        new.over = self.over
        new.ending = self.ending
        new.winner = self.winner
        new.round_points = None if self.round_points is None else self.round_points.copy()
        new.places = None if self.places is None else self.places.copy()
        return new

    # ------------------------------------------------------------ queries

    @property
    def drawable(self) -> int:
        """Tiles that may still be drawn (the reserve never is)."""
        if not self.family.draws:
            return 0
        return len(self.boneyard) - self.reserve

    def playable(self, seat: int) -> int:
        """The tiles of `seat` that fit an open end now (any tile before the lead)."""
        if not self.layout.placements:
            return self.hands[seat] & self.lead_mask
        return self.hands[seat] & self.layout.playable_mask()

    def legal_actions(self) -> list[str]:
        """Every legal action string of the seat to move, canonical spelling."""
        if self.over:
            return []
        seat = self.to_move
        hand = self.hands[seat]
        layout = self.layout
        fam = self.family
        if not layout.placements:
            return [LEAD_TEXT[t] for t in bits(hand & self.lead_mask)]
        actions: list[str] = []
        end = layout.end
        closing = fam.closing
        for arm in layout.arms:
            m = hand & NUMBER_MASK[end[arm]]
            while m:
                low = m & -m
                t = low.bit_length() - 1
                m ^= low
                actions.append(PLAY_TEXT[t][arm])
                if closing and IS_DOUBLE[t]:
                    actions.append(CLOSE_TEXT[t][arm])
        if fam.multi_doubles and hand & DOUBLE_MASK:
            actions.extend(self._double_combos(hand))
        if actions:
            if fam.draw_when_able and self.drawable > 0:
                actions.append("draw")
            if fam.voluntary_pass:
                actions.append("pass")
            return actions
        if self.drawable > 0:
            return ["draw"]
        return ["pass"]

    def _double_combos(self, hand: int) -> list[str]:
        """Moves of two or more doubles at once, each on a different matching arm (O, K classic)."""
        fam = self.family
        end = self.layout.end
        options: list[list[tuple[int, int]]] = []  # per double in hand: the arms it may go on
        for t in bits(hand & DOUBLE_MASK):
            arms = [a for a in range(len(end)) if end[a] == LOW[t]]
            if arms:
                options.append([(t, a) for a in arms])
        if len(options) < 2:
            return []
        results: list[str] = []
        flags = (False, True) if fam.closing else (False,)

        def extend(i: int, chosen: list[tuple[int, int, bool]], used: int) -> None:
            if i == len(options):
                if len(chosen) >= 2 and fam.combo_allowed(chosen, self.layout):
                    parts = sorted(chosen, key=lambda p: p[1])
                    results.append("+".join(
                        (CLOSE_TEXT if f else PLAY_TEXT)[t][a] for t, a, f in parts))
                return
            extend(i + 1, chosen, used)
            for t, a in options[i]:
                if used >> a & 1:
                    continue
                for f in flags:
                    chosen.append((t, a, f))
                    extend(i + 1, chosen, used | 1 << a)
                    chosen.pop()

        extend(0, [], 0)
        return results

    def legal_moves(self) -> list[Move]:
        """`legal_actions` as typed moves, in the same order (what a bot's playout iterates).

        One generator, `legal_actions`; each string is looked up in `notation.MOVES`
        (a move of several doubles, which is not there, is parsed). Generating the
        strings from typed moves instead would cost every `legal_actions` call a
        formatting step, and that is the hot path of every game (the typed twin of
        the whole generator cost a test to keep the two equal).
        """
        actions = self.legal_actions()
        moves = MOVES
        try:
            return [moves[text] for text in actions]
        except KeyError:  # a move of several doubles (O, K classic)
            return [moves.get(text) or Move.parse(text) for text in actions]

    def is_blocked(self) -> bool:
        """Nobody can play and nothing can be drawn (C "Blocked")."""
        if not self.layout.placements or self.drawable > 0:
            return False
        return not self.held & self.layout.fit_mask

    # ------------------------------------------------------------ transitions

    def validate(self, move: Move, text: str) -> None:
        """Raise IllegalActionError unless `move` is legal for the seat to move."""
        if self.over:
            raise IllegalActionError("the round is over")
        kind, placements = move
        seat = self.to_move
        hand = self.hands[seat]
        fam = self.family
        layout = self.layout
        if kind == LEAD:
            tile = placements[0][0]
            if not hand >> tile & 1:
                raise IllegalActionError(f"{text!r}: seat {seat} does not hold {NAMES[tile]}")
            if layout.placements:  # a bare tile after the lead: say where it goes, or that it fits nowhere
                arms = [ARM_NAMES[arm] for arm in range(ARM_COUNT) if layout.fits(tile, arm)]
                if not arms:
                    ends = ", ".join(f"{ARM_NAMES[arm]} {v}" for arm, v in enumerate(layout.end) if v >= 0)
                    raise IllegalActionError(f"{text!r}: {NAMES[tile]} fits no open end (they show {ends})")
                raise IllegalActionError(f"{text!r}: the round is already led; name the arm: "
                                         + " or ".join(f"'{NAMES[tile]}@{arm}'" for arm in arms))
            if not self.lead_mask >> tile & 1:
                must = ", ".join(NAMES[t] for t in bits(self.lead_mask & hand))
                raise IllegalActionError(f"{text!r}: this round must be led with {must}")
            return
        if kind == PLAY:
            if not layout.placements:
                raise IllegalActionError(f"{text!r}: the round has not been led; play a bare tile")
            tiles = 0
            for tile, arm, closes in placements:
                if not hand >> tile & 1:
                    raise IllegalActionError(f"{text!r}: seat {seat} does not hold {NAMES[tile]}")
                if not layout.fits(tile, arm):
                    shown = layout.end[arm]
                    why = "is not open" if shown < 0 else f"shows {shown}"
                    raise IllegalActionError(f"{text!r}: {NAMES[tile]} does not fit arm {ARM_NAMES[arm]}, which {why}")
                if closes and not fam.closing:
                    raise IllegalActionError(f"{text!r}: arms cannot be closed in this variant")
                tiles |= 1 << tile
            if len(placements) > 1:
                if not fam.multi_doubles:
                    raise IllegalActionError(f"{text!r}: one tile per move in this variant")
                if not fam.combo_allowed(list(placements), layout):
                    raise IllegalActionError(f"{text!r}: these doubles cannot be played together")
            return
        if kind in (DRAW, PASS) and not layout.placements:
            must = ", ".join(NAMES[t] for t in bits(self.lead_mask & hand))
            raise IllegalActionError(f"{text!r}: the round must first be led, with {must}")
        if kind == DRAW:
            if self.drawable <= 0:
                raise IllegalActionError("nothing can be drawn")
            if self.playable(seat) and not fam.draw_when_able:
                raise IllegalActionError(f"seat {seat} holds a playable tile and must play it")
            return
        if kind == PASS:
            if fam.voluntary_pass:
                return
            if self.playable(seat):
                raise IllegalActionError(f"seat {seat} holds a playable tile and must play it")
            if self.drawable > 0:
                raise IllegalActionError(f"seat {seat} cannot play and must draw")
            return
        raise IllegalActionError(f"{text!r}: unknown action")  # pragma: no cover

    def apply(self, text: str, events: list[Event]) -> bool:
        """Validate and apply one action; returns True when the round ended with it."""
        return self.apply_move(MOVES.get(text) or Move.parse(text), events, text)

    def apply_move(self, move: Move, events: list[Event], text: str | None = None) -> bool:
        """`apply` for a typed move (`notation.Move`): the same checks and transitions, no parsing.

        `text` is the action as the caller spelled it, for messages; without it the
        canonical spelling (`Move.text`) is used, looked up only when needed.
        """
        kind, placements = move
        seat = self.to_move
        layout = self.layout
        if kind == PLAY and len(placements) == 1 and not self.over:
            # The common case, checked inline: one tile that the seat holds and that fits an open end.
            placed = placements[0]
            tile, arm, closes = placed
            v = layout.end[arm]
            far = OTHER[tile][v] if v >= 0 else -1
            hand = self.hands[seat]
            if hand >> tile & 1 and far >= 0 and not closes and layout.placements:
                layout.place(placed, far)
                return self._played(seat, hand & ~(1 << tile), PLAY_TEXT[tile][arm] if text is None else text,
                                    move, events)
        if text is None:
            text = move.text()
        self.validate(move, text)
        fam = self.family
        if kind == DRAW:
            tile = self.boneyard.pop()
            self.hands[seat] |= 1 << tile
            self.held |= 1 << tile
            events.append({"type": "drew", "seat": seat, "tile": NAMES[tile]})
            self.last_score = 0
            if self.is_blocked():
                self._end("blocked")
                return True
            return False
        if kind == PASS:
            self.passes += 1
            self.last_score = 0
            events.append({"type": "passed", "seat": seat})
            if fam.passes_end_round(self.passes) or fam.round_ends_after_turn(self.leader, seat, len(self.out)):
                self._end("out" if self.out else "blocked")
                return True
            self._advance()
            if self.is_blocked():
                self._end("out" if self.out else "blocked")
                return True
            return False
        hand = self.hands[seat]
        for tile, arm, flag in placements:
            hand &= ~(1 << tile)
            if arm == CENTER:
                layout.lead(tile, flag)
            else:
                layout.attach(tile, arm, flag)
        return self._played(seat, hand, text, move, events)

    def _played(self, seat: int, hand: int, text: str, move: Move, events: list[Event]) -> bool:
        """The rest of a play once `seat` put its tiles on the layout (`hand`: what it keeps).

        Returns True when the round ended with it.
        """
        layout = self.layout
        self.hands[seat] = hand
        self.held &= ~layout.on_table
        self.passes = 0
        self.last_placer = seat
        events.append({"type": "played", "seat": seat, "action": CANONICAL.get(text) or move.text()})
        fam = self.family
        if fam.counts:
            count = layout.count()
            points = fam.in_play_points(count)
            self.last_score = points
            if points:
                events.append({"type": "points_scored", "seat": seat, "points": points, "count": count})
        if hand == 0:
            self.out.append(seat)
            if fam.round_ends_when_out(self.leader, seat, len(self.out)):
                self._end("out")
                return True
        arms = layout.arms
        if (fam.fish_without_double and arms and layout.end[arms[0]] == layout.end[arms[-1]]
                and self._exhausted_number()):
            self._end("fish-exhausted")
            return True
        if fam.many_out:
            if fam.round_ends_after_turn(self.leader, seat, len(self.out)):
                self._end("out" if self.out else "blocked")
                return True
            self._advance()
        else:
            self.to_move = seat + 1 if seat + 1 < self.players else 0
        if (not fam.draws or len(self.boneyard) <= self.reserve) and not self.held & layout.fit_mask:
            self._end("out" if self.out else "blocked")
            return True
        return False

    def _advance(self) -> None:
        n = self.players
        seat = (self.to_move + 1) % n
        while seat in self.out and len(self.out) < n:
            seat = (seat + 1) % n
        self.to_move = seat

    def _exhausted_number(self) -> bool:
        """Every open end shows v and all six non-double v tiles are on the table (K, O)."""
        layout = self.layout
        end = layout.end
        arms = layout.arms
        if not arms:
            return False
        v = end[arms[0]]
        for a in arms:
            if end[a] != v:
                return False
        six = NUMBER_MASK[v] & ~(1 << DOUBLE_OF[v])
        return self.layout.on_table & six == six

    def _end(self, how: str) -> None:
        """Mark the round over; the family names the ending and scores it."""
        self.over = True
        self.ending = how




__all__ = ["Round"]
