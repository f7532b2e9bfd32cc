"""An independent, deliberately plain model of Kozel written from RULES.md C and K only.

It shares no code with `engine_service.rules`: tiles are (low, high) tuples, the
layout is its two end numbers, hands are sets. The property tests play the engine
and this model side by side and compare what each allows and how each scores, so
a rule the engine gets wrong shows up as a disagreement.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Tile = tuple[int, int]
ALL: list[Tile] = [(a, b) for a in range(7) for b in range(a, 7)]

# K "first lead, first round".
NON_DOUBLES_DESC: list[Tile] = [(a, b) for b in range(6, -1, -1) for a in range(b - 1, -1, -1)]
ONE_ONE_UP: list[Tile] = [(v, v) for v in (1, 2, 3, 4, 5, 6, 0)] + NON_DOUBLES_DESC
HIGHEST_DOUBLE: list[Tile] = [(v, v) for v in (6, 5, 4, 3, 2, 1, 0)] + NON_DOUBLES_DESC

KOZEL = {"hand_size": "seven", "lead": "one-one-up", "misdeal": "five-doubles-or-six-of-a-number",
         "double_pair": False, "zero_double": "lone-ten", "fish_without_double": True,
         "fish_scoring": "each", "open_threshold": 13, "target": 101}
KOZEL_CLASSIC = {"hand_size": "by-players", "lead": "highest-double", "misdeal": "none",
                 "double_pair": True, "zero_double": "twenty-five", "fish_without_double": False,
                 "fish_scoring": "each", "open_threshold": 13, "target": 101}
PRESETS = {"kozel": KOZEL, "kozel-classic": KOZEL_CLASSIC}


def tile(text: str) -> Tile:
    a, b = (int(x) for x in text.split("-"))
    return (min(a, b), max(a, b))


def name(t: Tile) -> str:
    return f"{t[0]}-{t[1]}"


def other_half(t: Tile, v: int) -> int | None:
    if t[0] == v:
        return t[1]
    if t[1] == v:
        return t[0]
    return None


def round_half_up(n: int, d: int) -> int:
    """round(n / d) with .5 going up, for any integer n (written without floats)."""
    q, r = divmod(n, d)
    return q + (1 if 2 * r >= d else 0)


@dataclass
class KozelModel:
    options: dict[str, Any]
    players: int
    written: list[int] = field(default_factory=list)
    remembered: list[int] = field(default_factory=list)
    pot: int = 0
    next_leader: int | None = None
    rounds: int = 0
    match_over: bool = False
    losers: list[int] = field(default_factory=list)
    rating: list[int] = field(default_factory=list)
    # the round
    hands: list[set[Tile]] = field(default_factory=list)
    boneyard: list[Tile] = field(default_factory=list)     # draw order, first drawn first
    ends: dict[str, int] = field(default_factory=dict)       # {"W": .., "E": ..} once led
    table: set[Tile] = field(default_factory=set)
    to_move: int = 0
    lead_tiles: set[Tile] = field(default_factory=set)
    last_placer: int | None = None
    over: bool = True
    ending: str | None = None
    winner: int | None = None
    round_points: list[int] = field(default_factory=list)

    @classmethod
    def new(cls, variant: str, players: int, overrides: dict[str, Any] | None = None) -> KozelModel:
        options = dict(PRESETS[variant])
        options.update(overrides or {})
        return cls(options, players, [0] * players, [0] * players)

    # ------------------------------------------------------------ dealing

    def hand_size(self) -> int:
        h = self.options["hand_size"]
        if h == "seven":
            return 7
        if h == "five":
            return 5
        if h == "by-players":
            return 7 if self.players == 2 else 5
        return {2: 7, 3: 6, 4: 5}[self.players]

    def is_misdeal(self, hands: list[set[Tile]]) -> bool:
        rule = self.options["misdeal"]
        if rule == "none":
            return False
        for hand in hands:
            if sum(1 for a, b in hand if a == b) >= 5:
                return True
            if rule == "five-doubles-or-six-of-a-number" and any(
                    sum(1 for t in hand if v in t) >= 6 for v in range(7)):
                return True
        return False

    def deal(self, hands: list[list[str]], boneyard: list[str]) -> None:
        self.hands = [{tile(x) for x in h} for h in hands]
        self.boneyard = [tile(x) for x in boneyard]
        assert len({t for h in self.hands for t in h} | set(self.boneyard)) == 28
        assert not self.is_misdeal(self.hands), "misdeal"
        self.ends, self.table = {}, set()
        self.over, self.ending, self.winner, self.round_points = False, None, None, []
        self.last_placer = None
        if self.rounds > 0 and self.next_leader is not None:
            # K: the seat that went out, or the fisherman, leads with any tile.
            self.to_move = self.next_leader
            self.lead_tiles = set(self.hands[self.to_move])
        else:
            order = ONE_ONE_UP if self.options["lead"] == "one-one-up" else HIGHEST_DOUBLE
            for t in order:
                holders = [s for s in range(self.players) if t in self.hands[s]]
                if holders:
                    self.to_move = holders[0]
                    self.lead_tiles = {t}
                    break
        self.rounds += 1

    # ------------------------------------------------------------ play

    def playable(self, seat: int) -> list[tuple[Tile, str]]:
        return [(t, arm) for t in sorted(self.hands[seat]) for arm in ("E", "W")
                if other_half(t, self.ends[arm]) is not None]

    def legal(self) -> set[str]:
        if self.over or self.match_over:
            return set()
        seat = self.to_move
        if not self.ends:
            return {name(t) for t in self.lead_tiles if t in self.hands[seat]}
        moves = {f"{name(t)}@{arm}" for t, arm in self.playable(seat)}
        if self.options["double_pair"]:
            doubles = [t for t in self.hands[seat] if t[0] == t[1]]
            for de in doubles:
                for dw in doubles:
                    if de != dw and de[0] == self.ends["E"] and dw[0] == self.ends["W"]:
                        moves.add(f"{name(de)}@E+{name(dw)}@W")
        if moves:
            return moves
        return {"draw"} if self.boneyard else {"pass"}

    def nobody_can_play(self) -> bool:
        return not any(self.playable(s) for s in range(self.players))

    def apply(self, action: str) -> None:
        assert action in self.legal(), (action, self.legal())
        seat = self.to_move
        if action == "draw":
            self.hands[seat].add(self.boneyard.pop(0))
            if not self.boneyard and self.nobody_can_play():
                self.finish("fish")
            return
        if action == "pass":
            self.to_move = (seat + 1) % self.players
            if not self.boneyard and self.nobody_can_play():
                self.finish("fish")
            return
        for part in action.split("+"):
            text, _, arm = part.partition("@")
            t = tile(text)
            self.hands[seat].remove(t)
            self.table.add(t)
            if not arm:
                a, b = (int(x) for x in text.split("-"))
                self.ends = {"W": a, "E": b}
            else:
                far = other_half(t, self.ends[arm])
                assert far is not None
                self.ends[arm] = far
        self.last_placer = seat
        self.to_move = (seat + 1) % self.players
        if not self.hands[seat]:
            self.winner = seat
            self.finish("out")
            return
        v = self.ends["W"]
        if (self.options["fish_without_double"] and self.ends["E"] == v
                and all((min(v, x), max(v, x)) in self.table for x in range(7) if x != v)):
            self.finish("fish")
            return
        if not self.boneyard and self.nobody_can_play():
            self.finish("fish")

    # ------------------------------------------------------------ scoring

    def hand_points(self, hand: set[Tile]) -> int:
        points = sum(a + b for a, b in hand)
        if (0, 0) in hand:
            if self.options["zero_double"] == "twenty-five":
                points += 25
            elif self.options["zero_double"] == "lone-ten" and len(hand) == 1:
                points += 10
        return points

    def score(self, seat: int, points: int) -> None:
        """K remembered points: a closed seat remembers rounds below the threshold."""
        if self.written[seat] > 0:
            self.written[seat] += points
        elif points >= self.options["open_threshold"]:
            self.written[seat] += points + self.remembered[seat]
            self.remembered[seat] = 0
        else:
            self.remembered[seat] += points

    def finish(self, ending: str) -> None:
        self.over = True
        self.ending = ending
        self.settle_points(ending, [self.hand_points(h) for h in self.hands], self.winner)
        self.next_leader = self.winner if ending == "out" else self.last_placer

    def settle_points(self, ending: str, points: list[int], winner: int | None) -> None:
        self.round_points = points
        best = max(points)
        top = [s for s, p in enumerate(points) if p == best]
        single = top[0] if len(top) == 1 else None
        if ending == "fish" and self.options["fish_scoring"] == "max_takes_all":
            if single is None:
                self.pot += sum(points)
            else:
                total = sum(points) + self.pot
                self.pot = 0
                for s in range(self.players):
                    if s != single and self.written[s] == 0:
                        self.remembered[s] = 0
                self.score(single, total)
        else:
            gains = list(points)
            if self.pot and single is not None:
                gains[single] += self.pot
                self.pot = 0
            for s in range(self.players):
                if s == winner:
                    if self.written[s] == 0:
                        self.remembered[s] = 0
                    continue
                self.score(s, gains[s])
        losers = [s for s in range(self.players) if self.written[s] >= self.options["target"]]
        if losers:
            self.match_over = True
            self.losers = losers
            self.rating = [0 if s in losers else max(1, round_half_up(100 - w, 10))
                           for s, w in enumerate(self.written)]
