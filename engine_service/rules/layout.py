"""Tiles on the table: arms, open ends and the open-end count (RULES.md C, O, TF).

One `Layout` serves every matching game. Its shape is one of:
- LINE: arms W and E (K, B, BL, and the counting games without a spinner);
- CROSS: a double lead opens N, E, S, W all showing its number (O); a
  non-double lead gives a line;
- SPINNER: the first double played opens four sides (TF, A3, A5), or with
  `all_spinners` every double does, the k-th opening Nk/Sk.

State is a handful of small lists indexed by arm, so attaching a tile, finding
the playable tiles and computing the count are a few table lookups.
"""
from __future__ import annotations

from typing import Final

from .errors import IllegalActionError, MalformedError
from .notation import ARM_COUNT, ARM_NAMES, CENTER, E, N, Placement, S, W, spinner_sides
from .tiles import HIGH, IS_DOUBLE, LOW, NAMES, NUMBER_MASK, OTHER

LINE: Final = 0
CROSS: Final = 1
SPINNER: Final = 2
SHAPES: Final = {"line": LINE, "cross": CROSS, "spinner": SPINNER}

# How an arm's tip counts toward the open-end count T.
TIP_PLAIN: Final = 0   # the end's value
TIP_DOUBLE: Final = 1  # a crosswise double: both halves
TIP_ZERO: Final = 2    # nothing (a spinner's W/E side, or a side that has no tile yet under until-both-sides)
TIP_SIDE: Final = 3    # an empty spinner side: the spinner's number (or 0 when spinner_counts is off)


class Layout:
    """The table of one round: placements in play order plus per-arm ends."""

    __slots__ = (
        "shape", "all_spinners", "until_both", "spinner_counts",
        "placements", "end", "tip", "length", "on_table", "spinners", "pending", "centre_tip",
        "arms", "fit_mask",
    )

    def __init__(
        self,
        shape: int = LINE,
        all_spinners: bool = False,
        until_both: bool = False,
        spinner_counts: bool = True,
    ) -> None:
        self.shape = shape
        self.all_spinners = all_spinners
        self.until_both = until_both
        self.spinner_counts = spinner_counts
        self.placements: list[Placement] = []
        self.end: list[int] = [-1] * ARM_COUNT       # open end value, -1: not open
        self.tip: list[int] = [TIP_PLAIN] * ARM_COUNT
        self.length: list[int] = [0] * ARM_COUNT      # tiles on each arm
        self.on_table = 0                             # bit set of tiles on the table
        self.spinners = 0                             # spinners played so far
        # until-both-sides spinners whose sides are not open yet:
        # (host arm or CENTER, value, k, host length when laid)
        self.pending: list[tuple[int, int, int, int]] = []
        # How the lead double counts once it lies at the tip of an empty W/E side (-1: n/a).
        self.centre_tip = -1
        self.arms: list[int] = []   # open arms, ascending (N, E, S, W, N2, S2, ...)
        self.fit_mask = 0           # tiles that fit at least one open end

    # ------------------------------------------------------------ queries

    def ends(self) -> dict[str, int]:
        """Open arms and the numbers they show (closed and unopened arms absent)."""
        end = self.end
        return {ARM_NAMES[a]: end[a] for a in self.arms}

    def playable_mask(self) -> int:
        """Tiles that fit at least one open end."""
        return self.fit_mask

    def _refresh(self) -> None:
        """Recompute the open arms and the fitting tiles after ends opened or closed."""
        end = self.end
        self.arms = [a for a in range(ARM_COUNT) if end[a] >= 0]
        m = 0
        for a in self.arms:
            m |= NUMBER_MASK[end[a]]
        self.fit_mask = m

    def count(self) -> int:
        """The open-end count T of RULES.md TF."""
        if not self.placements:
            return 0
        total = 0
        end, tip = self.end, self.tip
        for a in self.arms:
            v = end[a]
            k = tip[a]
            if k == TIP_PLAIN:
                total += v
            elif k == TIP_DOUBLE:
                total += 2 * v
            elif k == TIP_SIDE and self.spinner_counts:
                total += v
        return total

    def copy(self) -> Layout:
        new = Layout.__new__(Layout)
        new.shape = self.shape
        new.all_spinners = self.all_spinners
        new.until_both = self.until_both
        new.spinner_counts = self.spinner_counts
        new.placements = self.placements.copy()
        new.end = self.end.copy()
        new.tip = self.tip.copy()
        new.length = self.length.copy()
        new.on_table = self.on_table
        new.spinners = self.spinners
        new.pending = self.pending.copy()
        new.centre_tip = self.centre_tip
        new.arms = self.arms.copy()
        new.fit_mask = self.fit_mask
        return new

    # ------------------------------------------------------------ changes

    def _is_spinner(self, tile: int) -> bool:
        return self.shape == SPINNER and IS_DOUBLE[tile] and (self.all_spinners or self.spinners == 0)

    def _spinner_tip(self) -> int:
        """How a spinner lying at an arm's tip counts until a tile lies beyond it."""
        if self.until_both and self.spinner_counts:
            return TIP_DOUBLE
        return TIP_ZERO

    def lead(self, tile: int, flipped: bool = False) -> None:
        self._lead(tile, flipped)
        self._refresh()

    def _lead(self, tile: int, flipped: bool = False) -> None:
        """Lay the round's first tile: `a` facing W, `b` facing E (high first if `flipped`)."""
        if self.placements:
            raise IllegalActionError("the round has already been led")
        a, b = (HIGH[tile], LOW[tile]) if flipped else (LOW[tile], HIGH[tile])
        self.placements.append((tile, CENTER, flipped))
        self.on_table |= 1 << tile
        self.end[W], self.end[E] = a, b
        if not IS_DOUBLE[tile]:
            return
        if self.shape == CROSS:
            self.end[N] = self.end[S] = a
            return
        if self._is_spinner(tile):
            self.spinners += 1
            if self.until_both:
                self.tip[W], self.tip[E] = self._spinner_tip(), TIP_ZERO
                self.centre_tip = self._spinner_tip()
                self.pending.append((CENTER, a, self.spinners, 0))
            else:
                self.tip[W] = self.tip[E] = TIP_ZERO
                n, s = spinner_sides(self.spinners)
                self.end[n] = self.end[s] = a
                self.tip[n] = self.tip[s] = TIP_SIDE
            return
        # A plain double lead counts its pips once while neither side carries a tile.
        self.tip[W], self.tip[E] = TIP_DOUBLE, TIP_ZERO
        self.centre_tip = TIP_DOUBLE

    def fits(self, tile: int, arm: int) -> bool:
        v = self.end[arm] if 0 <= arm < ARM_COUNT else -1
        return v >= 0 and OTHER[tile][v] >= 0

    def attach(self, tile: int, arm: int, closes: bool = False) -> None:
        """Attach `tile` to the open end of `arm` (IllegalActionError if it does not fit)."""
        if not self.placements:
            raise IllegalActionError("the round has not been led yet: play a bare tile first")
        v = self.end[arm] if 0 <= arm < ARM_COUNT else -1
        if v < 0:
            raise IllegalActionError(f"arm {ARM_NAMES[arm]} is not open")
        far = OTHER[tile][v]
        if far < 0:
            raise IllegalActionError(f"{NAMES[tile]} does not fit arm {ARM_NAMES[arm]} showing {v}")
        if closes and not IS_DOUBLE[tile]:
            raise IllegalActionError(f"only a double closes an arm, not {NAMES[tile]}")
        self.place((tile, arm, closes), far)

    def place(self, placed: Placement, far: int) -> None:
        """Attach a placement already checked to fit: `far` is the number it leaves open.

        The caller guarantees what `attach` checks (led, arm open, tile fits,
        only a double closes); the round's hot path checks it inline.
        """
        tile, arm, closes = placed
        self.placements.append(placed)
        self.on_table |= 1 << tile
        if self.length[arm] == 0 and (arm == W or arm == E) and self.centre_tip >= 0:
            # The lead double now lies crosswise at the tip of the still empty other side.
            other = E if arm == W else W
            if self.length[other] == 0:
                self.tip[other] = self.centre_tip
            self.centre_tip = -1
        self.length[arm] += 1
        end = self.end
        end[arm] = -1 if closes else far
        if self.shape == SPINNER and IS_DOUBLE[tile] and (self.all_spinners or self.spinners == 0):
            self.spinners += 1
            if self.until_both:
                self.tip[arm] = self._spinner_tip()
                self.pending.append((arm, far, self.spinners, self.length[arm]))
            else:
                self.tip[arm] = TIP_ZERO
                n, s = spinner_sides(self.spinners)
                self.end[n] = self.end[s] = far
                self.tip[n] = self.tip[s] = TIP_SIDE
        else:
            self.tip[arm] = TIP_DOUBLE if IS_DOUBLE[tile] else TIP_PLAIN
            if not closes and not self.pending:
                # The common case: no arm opened or closed, only the open ends to rescan.
                arms = self.arms
                if len(arms) == 2:
                    a0, a1 = arms
                    self.fit_mask = NUMBER_MASK[end[a0]] | NUMBER_MASK[end[a1]]
                else:
                    m = 0
                    for a in arms:
                        m |= NUMBER_MASK[end[a]]
                    self.fit_mask = m
                return
        if self.pending:
            self._open_pending()
        self._refresh()

    def _open_pending(self) -> None:
        """until-both-sides: open a spinner's sides once tiles lie against both its W and E."""
        still: list[tuple[int, int, int, int]] = []
        for host, value, k, length in self.pending:
            if host == CENTER:
                ready = self.length[W] > 0 and self.length[E] > 0
            else:
                ready = self.length[host] > length
            if ready:
                n, s = spinner_sides(k)
                self.end[n] = self.end[s] = value
                self.tip[n] = self.tip[s] = TIP_ZERO
            else:
                still.append((host, value, k, length))
        self.pending = still

    # ------------------------------------------------------------ serialization

    @classmethod
    def rebuild(
        cls,
        placements: list[Placement],
        shape: int,
        all_spinners: bool = False,
        until_both: bool = False,
        spinner_counts: bool = True,
    ) -> Layout:
        """Replay placements in order; MalformedError if they are not a possible layout."""
        layout = cls(shape, all_spinners, until_both, spinner_counts)
        layout.replay(placements)
        return layout

    def replay(self, placements: list[Placement]) -> None:
        """Lay `placements` in order on this empty layout; MalformedError if they are not possible.

        Every state the engine decodes replays its layout, so a tile that plainly fits an open
        arm goes straight to `place`; anything else takes `attach`, which names what is wrong.
        """
        end = self.end
        for i, (tile, arm, flag) in enumerate(placements):
            if self.on_table >> tile & 1:
                raise MalformedError(f"layout holds {NAMES[tile]} twice")
            if i and 0 <= arm < ARM_COUNT and not flag:
                v = end[arm]
                far = OTHER[tile][v] if v >= 0 else -1
                if far >= 0:
                    self.place((tile, arm, False), far)
                    continue
            try:
                if i == 0:
                    if arm != CENTER:
                        raise MalformedError("the layout's first entry must be the lead (a bare tile)")
                    self.lead(tile, flag)
                else:
                    if arm == CENTER:
                        raise MalformedError(f"layout entry {i} is a second lead")
                    self.attach(tile, arm, flag)
            except IllegalActionError as exc:
                raise MalformedError(f"impossible layout at entry {i}: {exc}") from None
