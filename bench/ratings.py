"""How well the skill rating finds players of known strength: openskill (the archive's) against Elo.

    .venv/bin/python bench/ratings.py [--matches 600] [--team-matches 300] [--seeds 5]

Players of known strength: 12 computer players, two at each greed 0, 0.2 ... 1.0:
at each move a player of greed g plays the engine's greedy bot's move with
probability g, else a uniformly random legal move (greedy beats random in 81% of
All Fives rounds, docs/bots.md). Whole matches through the rules, in process:

- free-for-all: All Fives, 4 players drawn at random from the 12;
- teams: Threes-and-Fives with `teams`, 4 players drawn, partners 0+2 against 1+3.

Each match's places are read from its result exactly as the archive reads them
(`api_gateway.archive.results.places`), and every rating system replays the same
sequence of matches:

- `openskill-pl`: openskill's Plackett-Luce, as the archive rates (`archive.skill`);
- `openskill-bt`, `openskill-tm`: the same library's Bradley-Terry and
  Thurstone-Mosteller (full pairing) models, for the choice of model;
- `elo`: multiplayer Elo, the usual alternative without a library: each pair of
  sides scores 1 / 0.5 / 0 by place, K = 32 / (sides - 1), a team's rating the
  mean of its players', every player of a team moving by the team's change.

Reported per system: the **prediction accuracy** (before each match, for every two
sides that did not share a place, is the one rated higher the one placed higher?
a tie in rating counts half), over all matches and over the second half; and the
**Kendall tau** between the final ratings and the true greed (1: the exact order),
and the matches after which tau first stays at 0.6 or more. Each of `--seeds`
runs draws its own matches; accuracy is pooled over every pair of every run, the
rest averaged. Written to bench/results/ratings.json.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openskill.models import BradleyTerryFull, ThurstoneMostellerFull

from api_gateway.archive import skill
from api_gateway.archive.results import places
from engine_service.bots import suggest
from engine_service.bots.observe import SeatLog
from engine_service.rules import Match

GREEDS = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
RESULTS = Path(__file__).resolve().parent / "results" / "ratings.json"


@dataclass
class Played:
    players: list[int]      # seat -> player index
    sides: list[int]        # seat -> side
    places: list[int]       # seat -> place


def play(variant: str, options: dict[str, Any], seats: list[int], greed: list[float], rng: random.Random,
         seed: int) -> Played:
    """One whole match, each seat's player choosing greedy with its greed, else at random."""
    match, events = Match.new(variant, len(seats), seed=seed, options=options)
    log = SeatLog()
    log.record(events)
    while not match.match_over:
        rnd = match.round
        if rnd is None or rnd.over:
            log.record(match.start_round())
            continue
        seat = match.to_move
        legal = match.legal_actions()
        if len(legal) > 1 and rng.random() < greed[seats[seat]]:
            action = suggest(log.view(match, seat), "greedy", seed=seed)
        else:
            action = rng.choice(legal)
        log.record(match.apply(action))
    result = {"winners": match.winners, "losers": match.losers, "rating": match.rating,
              "scores": match.ledger.scores}
    side_of, place = places(result, len(seats), None)
    return Played(seats, side_of, place)


def teams_of(m: Played) -> tuple[list[list[int]], list[int]]:
    """The sides (lists of player indexes) and each side's place."""
    sides = sorted(set(m.sides))
    members = [[p for p, s in zip(m.players, m.sides) if s == side] for side in sides]
    place = [next(pl for pl, s in zip(m.places, m.sides) if s == side) for side in sides]
    return members, place


# ---------------------------------------------------------------- rating systems


class System:
    name = ""

    def strength(self, player: int) -> float:
        raise NotImplementedError

    def update(self, sides: list[list[int]], place: list[int]) -> None:
        raise NotImplementedError


class Archive(System):
    """The archive's own rating: `api_gateway.archive.skill.rate` (openskill Plackett-Luce)."""

    name = "openskill-pl"

    def __init__(self, n: int) -> None:
        self.skills = [skill.newcomer() for _ in range(n)]

    def strength(self, player: int) -> float:
        return self.skills[player].mu

    def update(self, sides: list[list[int]], place: list[int]) -> None:
        new = skill.rate([[self.skills[p] for p in side] for side in sides], place)
        for side, rated in zip(sides, new):
            for p, s in zip(side, rated):
                self.skills[p] = s


class OpenSkill(System):
    def __init__(self, name: str, model: Any, n: int) -> None:
        self.name = name
        self.model = model
        self.ratings = [model.rating() for _ in range(n)]

    def strength(self, player: int) -> float:
        return float(self.ratings[player].mu)

    def update(self, sides: list[list[int]], place: list[int]) -> None:
        new = self.model.rate([[self.ratings[p] for p in side] for side in sides], ranks=place)
        for side, rated in zip(sides, new):
            for p, r in zip(side, rated):
                self.ratings[p] = r


class Elo(System):
    name = "elo"

    def __init__(self, n: int, k: float = 32.0) -> None:
        self.r = [1500.0] * n
        self.k = k

    def strength(self, player: int) -> float:
        return self.r[player]

    def update(self, sides: list[list[int]], place: list[int]) -> None:
        team = [sum(self.r[p] for p in side) / len(side) for side in sides]
        k = self.k / (len(sides) - 1)
        delta = [0.0] * len(sides)
        for a, b in itertools.combinations(range(len(sides)), 2):
            expected = 1 / (1 + 10 ** ((team[b] - team[a]) / 400))
            actual = 1.0 if place[a] < place[b] else 0.5 if place[a] == place[b] else 0.0
            delta[a] += k * (actual - expected)
            delta[b] -= k * (actual - expected)
        for side, d in zip(sides, delta):
            for p in side:
                self.r[p] += d


# ---------------------------------------------------------------- measures


def kendall(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Kendall's tau-b."""
    concordant = discordant = tx = ty = 0
    for i, j in itertools.combinations(range(len(xs)), 2):
        dx, dy = xs[i] - xs[j], ys[i] - ys[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            tx += 1
        elif dy == 0:
            ty += 1
        elif (dx > 0) == (dy > 0):
            concordant += 1
        else:
            discordant += 1
    denominator = math.sqrt((concordant + discordant + tx) * (concordant + discordant + ty))
    return (concordant - discordant) / denominator if denominator else 0.0


@dataclass
class Score:
    right: float = 0.0
    pairs: int = 0
    late_right: float = 0.0
    late_pairs: int = 0
    taus: list[float] = field(default_factory=list)


def replay(systems: list[System], played: list[Played], greed: list[float]) -> dict[str, Any]:
    scores = {s.name: Score() for s in systems}
    half = len(played) // 2
    for i, m in enumerate(played):
        sides, place = teams_of(m)
        for system in systems:
            score = scores[system.name]
            strength = [sum(system.strength(p) for p in side) / len(side) for side in sides]
            for a, b in itertools.combinations(range(len(sides)), 2):
                if place[a] == place[b]:
                    continue
                better = a if place[a] < place[b] else b
                worse = b if better == a else a
                hit = 1.0 if strength[better] > strength[worse] else 0.5 if strength[better] == strength[worse] else 0.0
                score.right += hit
                score.pairs += 1
                if i >= half:
                    score.late_right += hit
                    score.late_pairs += 1
            system.update(sides, place)
            score.taus.append(kendall([system.strength(p) for p in range(len(greed))], greed))
    out: dict[str, Any] = {}
    for system in systems:
        s = scores[system.name]
        settled = next((i + 1 for i in range(len(s.taus)) if all(t >= 0.6 for t in s.taus[i:])), None)
        out[system.name] = {"accuracy": round(s.right / s.pairs, 4), "accuracy_second_half":
                            round(s.late_right / s.late_pairs, 4), "pairs": s.pairs,
                            "final_tau": round(s.taus[-1], 3), "matches_to_tau_0.6": settled}
    return out


def simulate(variant: str, options: dict[str, Any], count: int, seed: int, greed: list[float]) -> list[Played]:
    rng = random.Random(seed)
    played = []
    for i in range(count):
        seats = rng.sample(range(len(greed)), 4)
        played.append(play(variant, options, seats, greed, rng, seed * 1_000_003 + i))
    return played


def systems_for(n: int) -> list[System]:
    return [Archive(n), OpenSkill("openskill-bt", BradleyTerryFull(), n),
            OpenSkill("openskill-tm", ThurstoneMostellerFull(), n), Elo(n)]


def pooled(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The seeds' results per system: accuracy pooled over every pair, tau and matches-to-0.6 as means."""
    out: dict[str, Any] = {}
    for name in runs[0]:
        rs = [run[name] for run in runs]
        pairs = sum(r["pairs"] for r in rs)
        settled = [r["matches_to_tau_0.6"] for r in rs]
        out[name] = {
            "accuracy": round(sum(r["accuracy"] * r["pairs"] for r in rs) / pairs, 4), "pairs": pairs,
            "accuracy_second_half": round(sum(r["accuracy_second_half"] for r in rs) / len(rs), 4),
            "final_tau": round(sum(r["final_tau"] for r in rs) / len(rs), 3),
            "final_tau_min": min(r["final_tau"] for r in rs),
            "matches_to_tau_0.6": None if None in settled else round(sum(settled) / len(settled)),
            "seeds_never_settled": settled.count(None)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=600, help="free-for-all matches per seed [600]")
    ap.add_argument("--team-matches", type=int, default=300, help="2v2 matches per seed [300]")
    ap.add_argument("--seeds", type=int, default=5, help="independent runs, seeds 1..N [5]")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    greed = [g for g in GREEDS for _ in range(2)]
    report: dict[str, Any] = {"players": len(greed), "greeds": GREEDS, "seeds": args.seeds}
    for label, variant, options, count in (("free-for-all", "all-fives", {}, args.matches),
                                           ("teams", "threes-fives", {"teams": True}, args.team_matches)):
        started = time.perf_counter()
        runs = [replay(systems_for(len(greed)), simulate(variant, options, count, seed, greed), greed)
                for seed in range(1, args.seeds + 1)]
        results = pooled(runs)
        report[label] = {"variant": variant, "matches_per_seed": count,
                         "seconds": round(time.perf_counter() - started, 1), "systems": results}
        print(f"{label}: {args.seeds} x {count} matches of {variant} ({report[label]['seconds']} s)", file=sys.stderr)
        for name, r in results.items():
            print(f"  {name:13} accuracy {r['accuracy']:.3f} over {r['pairs']} pairs (second half "
                  f"{r['accuracy_second_half']:.3f})  final tau {r['final_tau']:.3f} (min {r['final_tau_min']:.3f})"
                  f"  tau >= 0.6 from match {r['matches_to_tau_0.6']} (never: {r['seeds_never_settled']})",
                  file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())


