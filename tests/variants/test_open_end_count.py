"""The open-end count T (RULES.md TF "The open-end count", used by TF, A3, A5) and the in-play
score, against a second implementation written from the rules text alone.

Random seeded hands of every counting preset under every spinner option
(`spinner` first-double / none / all-doubles, `spinner_ends` open-sides /
until-both-sides, `spinner_counts` on / off) are played; after every play the
reference layout below predicts the open arms, their ends, T and the points
scored, and the engine must agree.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from engine_service.rules import Match


@dataclass
class Arm:
    end: int
    tip: str          # how its tip counts: "plain" (end), "double" (2 x end), "zero", "side" (spinner side)
    tiles: int = 0


@dataclass
class RefLayout:
    """RULES.md TF: arms, ends and T, kept the slow, literal way."""

    spinner: str
    until_both: bool
    counts: bool
    arms: dict[str, Arm] = field(default_factory=dict)
    spinners: int = 0
    centre_tip: str | None = None                 # a double lead, while a W/E side is still empty
    pending: list[tuple[str | None, int, int, int]] = field(default_factory=list)

    def sides(self, k: int) -> tuple[str, str]:
        return ("N", "S") if k == 1 else (f"N{k}", f"S{k}")

    def spins(self, a: int, b: int) -> bool:
        return a == b and (self.spinner == "all-doubles" or (self.spinner == "first-double" and self.spinners == 0))

    def lead(self, a: int, b: int) -> None:
        if a != b:
            self.arms = {"W": Arm(a, "plain"), "E": Arm(b, "plain")}
            return
        if not self.spins(a, b):
            # A plain double lead counts its pips once; a side left empty later counts both halves.
            self.arms = {"W": Arm(a, "double"), "E": Arm(a, "zero")}
            self.centre_tip = "double"
            return
        self.spinners = 1
        if self.until_both:
            both = "double" if self.counts else "zero"
            self.arms = {"W": Arm(a, both), "E": Arm(a, "zero")}
            self.centre_tip = both
            self.pending.append((None, a, 1, 0))
        else:
            self.arms = {"W": Arm(a, "zero"), "E": Arm(a, "zero"), "N": Arm(a, "side"), "S": Arm(a, "side")}

    def attach(self, a: int, b: int, name: str) -> None:
        arm = self.arms[name]
        v = arm.end
        assert v in (a, b), (a, b, name, v)
        far = b if a == v else a
        if name in ("W", "E") and arm.tiles == 0 and self.centre_tip is not None:
            other = self.arms["E" if name == "W" else "W"]
            if other.tiles == 0:
                other.tip = self.centre_tip
            self.centre_tip = None
        arm.tiles += 1
        arm.end = far
        if self.spins(a, b):
            self.spinners += 1
            k = self.spinners
            if self.until_both:
                arm.tip = "double" if self.counts else "zero"
                self.pending.append((name, far, k, arm.tiles))
            else:
                arm.tip = "zero"
                for side in self.sides(k):
                    self.arms[side] = Arm(far, "side")
        else:
            arm.tip = "double" if a == b else "plain"
        still = []
        for host, value, k, laid in self.pending:
            ready = (self.arms["W"].tiles > 0 and self.arms["E"].tiles > 0) if host is None \
                else self.arms[host].tiles > laid
            if ready:
                for side in self.sides(k):
                    self.arms[side] = Arm(value, "zero")
            else:
                still.append((host, value, k, laid))
        self.pending = still

    def ends(self) -> dict[str, int]:
        return {name: arm.end for name, arm in self.arms.items()}

    def count(self) -> int:
        total = 0
        for arm in self.arms.values():
            if arm.tip == "plain":
                total += arm.end
            elif arm.tip == "double":
                total += 2 * arm.end
            elif arm.tip == "side" and self.counts:
                total += arm.end
        return total


def in_play(variant: str, scoring: str, t: int) -> int:
    multiples = {"threes-fives": (3, 5), "fives-and-threes": (3, 5), "all-threes": (3,), "all-fives": (5,)}[variant]
    if t <= 0:
        return 0
    return sum((t // k if scoring == "multiples" else t) for k in multiples if t % k == 0)


SPINNER_OPTIONS = [
    {"spinner": s, "spinner_ends": e, "spinner_counts": c}
    for s, e, c in itertools.product(("first-double", "none", "all-doubles"),
                                     ("open-sides", "until-both-sides"), (True, False))
]
CASES = [(v, o) for v in ("threes-fives", "all-threes", "all-fives") for o in SPINNER_OPTIONS] + [
    ("fives-and-threes", {}),
    ("fives-and-threes", {"spinner": "first-double"}),
    ("threes-fives", {"scoring": "multiples", "spinner": "all-doubles"}),
    ("all-fives", {"scoring": "multiples"}),
]


def _id(case: tuple[str, dict[str, Any]]) -> str:
    v, o = case
    return v + "-" + "-".join(str(x) for x in o.values())


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_count_and_points_agree_with_a_literal_reading_of_the_rules(case: tuple[str, dict[str, Any]]) -> None:
    variant, options = case
    plays = 0
    for seed in range(40):
        rng = random.Random(seed)
        players = 2 + seed % 3
        match, _ = Match.new(variant, players, options=options, seed=seed)
        spinner = match.family.options["spinner"]
        until = match.family.options["spinner_ends"] == "until-both-sides"
        counts = bool(match.family.options["spinner_counts"])
        scoring = str(match.family.options["scoring"])
        ref = RefLayout(str(spinner), until, counts)
        rnd = match.round
        assert rnd is not None
        while not rnd.over and not match.match_over:
            action = rng.choice(match.legal_actions())
            seat = rnd.to_move
            before = list(match.ledger.scores)
            if action in ("draw", "pass"):
                match.apply(action)
                continue
            tile, _, arm = action.partition("@")
            a, b = (int(x) for x in tile.split("-"))
            if not arm:
                if rng.random() < 0.5:                         # spell the lead both ways
                    a, b = b, a
                    action = f"{a}-{b}"
                ref.lead(a, b)
            else:
                ref.attach(a, b, arm)
            match.apply(action)
            plays += 1
            t = ref.count()
            assert rnd.layout.ends() == ref.ends(), (seed, rnd.layout.placements)
            assert rnd.layout.count() == t, (seed, [p for p in match.to_dict()["round"]["layout"]])
            want = in_play(variant, scoring, t)
            side = seat % 2 if match.family.teams else seat
            exact = bool(match.family.options.get("exact_target"))
            refused = exact and before[side] + want > match.family.target
            assert rnd.last_score == (0 if refused else want), (seed, t)
            if not rnd.over:   # (a play that ends the hand also brings the hand bonus)
                assert match.ledger.scores[side] - before[side] == rnd.last_score
    assert plays > 100
