"""`domino bench bots`: the bots' strength and speed, level against level, every family (issue 15).

    domino bench bots                       # the suite: every family, expert:greedy and greedy:random
    domino bench bots --variant kozel --matchup greedy:random --unit match --pairs 1000
    domino bench bots --variant kingdomino --players 4 --deals 50

Matching games: each pair deals round 1 of a 2-player match twice from the same
seed, level A in seat 0 then in seat 1; a round is won by the side with the
better round score (bots/matching/outcome.py: points gained in the counting
games, fewer points charged elsewhere), a tie counts half. `--unit match` plays
whole matches instead (the side that is not the goat or donkey wins).
Kingdomino: 2 players as seat-swapped pairs of a game; 4 players as one level
against three of the other, the deal played four times with level A in each
seat; first place (a shared first counts 1/k).

Each run reports A's score rate with two 95% intervals: Wilson over rounds (as if
independent) and a normal interval over the pairs' means (what the pairing
gives), and the move times of level A (median, p99; wall clock and this
process's CPU time, which a busy machine inflates less), counting only the moves
with a choice. The suite's results go to bench/results/bots.json and, with
`domino bench report`, to the tables and plot of docs/bots.md; every run is also
appended to bench/results/bots.jsonl, the history.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from bench import save_json
from engine_service.bots import MATCHING_DEFAULT, Budget, kingdomino_default, suggest
from engine_service.bots.observe import SeatLog
from engine_service.rules import Kingdomino, Match
from engine_service.rules.registry import PRESETS, make_family

from . import bots_opponents


def wilson(score: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's 95% interval for a proportion `score` observed over `n` trials."""
    if n == 0:
        return 0.0, 1.0
    p = score / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return centre - half, centre + half


def paired(means: list[float], z: float = 1.96) -> tuple[float, float]:
    """A normal 95% interval for the mean of the pairs' results."""
    n = len(means)
    if n < 2:
        return 0.0, 1.0
    m = statistics.fmean(means)
    sd = statistics.stdev(means)
    half = z * sd / math.sqrt(n)
    return m - half, m + half


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def _decide(view: dict[str, Any], level: str, budget: Budget | None, bot_seed: int,
            times: dict[str, list[float]]) -> str:
    """`level`'s action for `view`; its wall and CPU time kept in `times` when it had a choice."""
    t, c = time.perf_counter(), time.process_time()
    if level in bots_opponents.OPPONENTS:
        action = bots_opponents.decide(view, level, bot_seed)
    else:
        action = suggest(view, level, budget=budget, seed=bot_seed)
    if len(view["legal"]) > 1:
        times[level].append(time.perf_counter() - t)
        times[level + ":cpu"].append(time.process_time() - c)
    return action


def _seated(variant: str, players: int, seed: int, a_side: int, a: str, b: str,
            options: dict[str, Any] | None = None) -> tuple[Match, list[Any], list[str]]:
    """A new match from `seed` and each seat's level: `a` for the seats of side `a_side`, `b` for the others
    (with `options` {"teams": True}, a side is a partnership: seats 0+2 against 1+3)."""
    match, events = Match.new(variant, players, options, seed=seed)
    fam = match.family
    return match, events, [a if fam.side_of(s) == a_side else b for s in range(players)]


def play_round(variant: str, players: int, seed: int, a_side: int, a: str, b: str, budget: Budget | None,
               bot_seed: int, times: dict[str, list[float]], options: dict[str, Any] | None = None) -> list[int]:
    """Round 1 of a match dealt from `seed`, side `a_side` playing level `a`; the sides' round scores."""
    match, events, levels = _seated(variant, players, seed, a_side, a, b, options)
    log = SeatLog()
    log.record(events)
    rnd = match.round
    assert rnd is not None
    start = list(match.ledger.scores)
    while not rnd.over and not match.match_over:
        seat = match.to_move
        view = log.view(match, seat)
        action = _decide(view, levels[seat], budget, bot_seed, times)
        log.record(match.apply(action))
    fam = match.family
    if fam.counts:
        return [a - b for a, b in zip(match.ledger.scores, start)]
    scores = [0] * fam.sides
    for s, p in enumerate(rnd.round_points or []):
        scores[fam.side_of(s)] -= p
    return scores


def play_match(variant: str, players: int, seed: int, a_side: int, a: str, b: str, budget: Budget | None,
               bot_seed: int, times: dict[str, list[float]], options: dict[str, Any] | None = None) -> list[int]:
    """A whole match from `seed`, side `a_side` playing level `a`, to its end; each side's result.

    A side that lost the match (the goat or donkey, a loser of the family's match
    rule) scores -1, the others 0; in the counting games the match's winners 0
    and the others -1. Rounds follow one another as the rules deal them.
    """
    match, events, levels = _seated(variant, players, seed, a_side, a, b, options)
    log = SeatLog()
    log.record(events)
    while not match.match_over:
        rnd = match.round
        if rnd is None or rnd.over:
            log.record(match.start_round())
            continue
        seat = match.to_move
        view = log.view(match, seat)
        action = _decide(view, levels[seat], budget, bot_seed, times)
        log.record(match.apply(action))
    fam = match.family
    if match.winners:
        return [0 if fam.side_of(s) in {fam.side_of(w) for w in match.winners} else -1 for s in range(fam.sides)]
    return [-1 if any(fam.side_of(seat) == s for seat in match.losers) else 0 for s in range(fam.sides)]


def bench_matching(args: argparse.Namespace) -> dict[str, Any]:
    """Level A against level B on seat-swapped deals: 2 players where the variant allows (A in each
    seat of a deal), else its fewest (Bykovo: 4, each for oneself; A in each seat against three B).
    A round goes to the side with the best score; a shared first counts 1/k."""
    preset = PRESETS[args.variant]
    options = {"teams": True} if getattr(args, "teams", False) else None
    args.players = players = 4 if options else max(2, preset.min_players)
    args.sides = sides = make_family(args.variant, players, options)[1].sides
    budget = Budget(args.budget) if args.budget else None
    times: dict[str, list[float]] = {args.a: [], args.b: [], args.a + ":cpu": [], args.b + ":cpu": []}
    rounds = wins = ties = 0
    score = 0.0
    pair_means: list[float] = []
    started = time.perf_counter()
    play = play_match if args.unit == "match" else play_round
    for i in range(args.pairs):
        seed = args.seed * 1_000_003 + i
        result = 0.0
        for a_side in range(sides):
            scores = play(args.variant, players, seed, a_side, args.a, args.b, budget, args.seed + i, times, options)
            best = max(scores)
            rounds += 1
            if scores[a_side] == best:
                share = 1 / scores.count(best)
                score += share
                result += share
                if share == 1:
                    wins += 1
                else:
                    ties += 1
        pair_means.append(result / sides)
        if args.progress and (i + 1) % args.progress == 0:
            print(f"  {i + 1} deals: {score / rounds:.3f}", file=sys.stderr, flush=True)
    kind = "matching" if args.unit == "round" else "matching-match"
    return _report(args, kind, rounds, wins, ties, score, pair_means, times, started)


def play_kingdomino(players: int, seed: int, levels: list[str], budget: Budget | None, bot_seed: int,
                    times: dict[str, list[float]]) -> list[int]:
    """One game from `seed`, players playing `levels`; the winners."""
    game, _events = Kingdomino.new(players, seed=seed)
    while not game.game_over:
        p = game.to_move
        assert p is not None
        view = game.view(p)
        action = _decide(view, levels[p], budget, bot_seed, times)
        game.apply(action)
    return game.winners()


def kingdomino_deal(args: argparse.Namespace, i: int) -> tuple[list[list[int]], dict[str, list[float]]]:
    """Deal `i` played once with level A in each seat: the winners of each game, and A's and B's times."""
    budget = Budget(args.budget) if args.budget else None
    times: dict[str, list[float]] = {args.a: [], args.b: [], args.a + ":cpu": [], args.b + ":cpu": []}
    n = args.players
    seed = args.seed * 1_000_003 + i
    results = []
    for a_seat in range(n):
        levels = [args.b] * n
        levels[a_seat] = args.a
        results.append(play_kingdomino(n, seed, levels, budget, args.seed + i, times))
    return results, times


def _deal_job(job: tuple[argparse.Namespace, int]) -> tuple[list[list[int]], dict[str, list[float]]]:
    return kingdomino_deal(*job)


def bench_kingdomino(args: argparse.Namespace) -> dict[str, Any]:
    times: dict[str, list[float]] = {args.a: [], args.b: [], args.a + ":cpu": [], args.b + ":cpu": []}
    games = wins = ties = 0
    score = 0.0
    pair_means: list[float] = []
    started = time.perf_counter()
    n = args.players
    jobs = [(args, i) for i in range(args.deals)]
    outcomes: Iterator[tuple[list[list[int]], dict[str, list[float]]]]
    pool = None
    if args.jobs > 1:
        # Deals in worker processes (each measures its own CPU time); results in deal order.
        import multiprocessing

        pool = multiprocessing.Pool(args.jobs)
        outcomes = pool.imap(_deal_job, jobs)
    else:
        outcomes = map(_deal_job, jobs)
    for i, (results, deal_times) in enumerate(outcomes):
        for key, values in deal_times.items():
            times[key].extend(values)
        result = 0.0
        for a_seat, winners in enumerate(results):
            games += 1
            if a_seat in winners:
                share = 1 / len(winners)
                score += share
                result += share
                if len(winners) == 1:
                    wins += 1
                else:
                    ties += 1
        pair_means.append(result / n)
        if args.progress and (i + 1) % args.progress == 0:
            print(f"  {i + 1} deals: {score / games:.3f}", file=sys.stderr, flush=True)
    if pool is not None:
        pool.close()
        pool.join()
    return _report(args, "kingdomino", games, wins, ties, score, pair_means, times, started)


def _report(args: argparse.Namespace, kind: str, n: int, wins: int, ties: int, score: float,
            pair_means: list[float], times: dict[str, list[float]], started: float) -> dict[str, Any]:
    lo, hi = wilson(score, n)
    plo, phi = paired(pair_means)
    a_times = times[args.a]
    a_cpu = times[args.a + ":cpu"]
    return {
        "kind": kind,
        "variant": args.variant,
        "players": args.players,
        "sides": getattr(args, "sides", args.players),
        **({"teams": True} if getattr(args, "teams", False) and kind != "kingdomino" else {}),
        "a": args.a, "b": args.b, "budget": args.budget or "default", "seed": args.seed,
        # What "default" was when this ran (defaults get retuned; the records stay readable).
        "default_budget": (kingdomino_default(args.players) if kind == "kingdomino" else MATCHING_DEFAULT).iterations,
        "games": n, "wins": wins, "ties": ties, "rate": round(score / n, 4),
        "wilson95": [round(lo, 4), round(hi, 4)], "paired95": [round(plo, 4), round(phi, 4)],
        "a_moves": len(a_times),
        "a_median_ms": round(1000 * statistics.median(a_times), 1) if a_times else None,
        "a_p99_ms": round(1000 * percentile(a_times, 0.99), 1) if a_times else None,
        "a_max_ms": round(1000 * max(a_times), 1) if a_times else None,
        "a_cpu_median_ms": round(1000 * statistics.median(a_cpu), 1) if a_cpu else None,
        "a_cpu_p95_ms": round(1000 * percentile(a_cpu, 0.95), 1) if a_cpu else None,
        "a_cpu_p99_ms": round(1000 * percentile(a_cpu, 0.99), 1) if a_cpu else None,
        "seconds": round(time.perf_counter() - started, 1),
    }


# One preset per family (RULES.md sections K, O, B, TF, A3, A5, BL), then Kingdomino (KD).
SUITE_VARIANTS = ("kozel", "osel", "bykovo", "threes-fives", "all-threes", "all-fives", "block", "kingdomino")
SUITE_MATCHUPS = (("expert", "greedy"), ("greedy", "random"))
#: The service's levels, and the bench-only opponents of the matching games (bench/bots_opponents.py).
LEVELS = ("random", "greedy", "expert", *bots_opponents.OPPONENTS)


def _matchup(text: str) -> tuple[str, str]:
    a, sep, b = text.partition(":")
    if not sep or a not in LEVELS or b not in LEVELS:
        raise argparse.ArgumentTypeError(f"{text!r}: want A:B with levels from {', '.join(LEVELS)}")
    return a, b


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: want a whole number of at least 1")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of `domino bench bots` (the common --json/--tiny/--save/--no-save come from the caller)."""
    p.add_argument("--variant", action="append", choices=SUITE_VARIANTS + ("kozel-classic", "fives-and-threes"),
                   help="only this variant (repeatable; default: one per family and kingdomino)")
    p.add_argument("--matchup", action="append", type=_matchup, metavar="A:B",
                   help="level A against level B (repeatable; default expert:greedy and greedy:random)")
    p.add_argument("--pairs", type=_positive, default=100, help="matching games: seat-swapped pairs per run (default 100)")
    p.add_argument("--unit", choices=("round", "match"), default="round",
                   help="matching games: a pair plays round 1 (default) or whole matches")
    p.add_argument("--players", type=int, action="append", choices=(2, 3, 4),
                   help="Kingdomino: players (repeatable; default 2 and 4)")
    p.add_argument("--deals", type=_positive, default=10, help="Kingdomino: deals per run (default 10)")
    p.add_argument("--jobs", type=_positive, default=1,
                   help="Kingdomino: deals played in this many worker processes (each times its own CPU)")
    p.add_argument("--teams", action="store_true",
                   help="matching games with a `teams` option (Osel, TF, A3, A5): 4 players, A's partnership "
                        "(seats 0+2, then 1+3) against B's")
    p.add_argument("--budget", type=_positive, help="iterations per decision (default: the level's own)")
    p.add_argument("--seed", type=int, default=1, help="the first deal's seed")
    p.add_argument("--progress", type=int, default=0, help="print the running rate every N pairs or deals")


def run_args(args: argparse.Namespace, log: TextIO = sys.stderr) -> dict[str, Any]:
    """Every run the flags name, one after the other; progress on `log`."""
    variants = args.variant or list(SUITE_VARIANTS)
    matchups = args.matchup or list(SUITE_MATCHUPS)
    players = args.players or [2, 4]
    if args.tiny:
        args.pairs, args.deals, args.budget = 2, 1, args.budget or 8
    runs: list[dict[str, Any]] = []
    started = time.perf_counter()
    for variant in variants:
        for a, b in matchups:
            for n in (players if variant == "kingdomino" else [2]):
                one = argparse.Namespace(**{**vars(args), "variant": variant, "a": a, "b": b, "players": n})
                label = f"{variant}{f' {n}p' if variant == 'kingdomino' else ''} {a} vs {b}"
                print(f"bench bots: {label} ...", file=log, flush=True)
                report = bench_kingdomino(one) if variant == "kingdomino" else bench_matching(one)
                print(f"bench bots: {label}: {report['rate']:.3f} of {report['games']} "
                      f"({report['wilson95'][0]:.3f}-{report['wilson95'][1]:.3f}) in {report['seconds']} s",
                      file=log, flush=True)
                runs.append(report)
    return {"kind": "bots", "runs": runs, "seconds": round(time.perf_counter() - started, 1),
            "load_average": list(_load())}


def _load() -> tuple[float, ...]:
    try:
        import os
        return tuple(round(x, 2) for x in os.getloadavg())
    except OSError:
        return ()


def format_text(result: dict[str, Any]) -> str:
    """One line per run."""
    lines = []
    for r in result["runs"]:
        unit = "matches" if r["kind"] == "matching-match" else ("games" if r["kind"] == "kingdomino" else "rounds")
        lines.append(f"{r['variant']} {r['players']}p {r['a']} vs {r['b']}: {r['rate']:.3f} of {r['games']} {unit} "
                     f"(wins {r['wins']}, ties {r['ties']}); 95% Wilson {r['wilson95'][0]:.3f}-"
                     f"{r['wilson95'][1]:.3f}, paired {r['paired95'][0]:.3f}-{r['paired95'][1]:.3f}; {r['a']} move "
                     f"median {r['a_median_ms']} ms, p99 {r['a_p99_ms']} ms (CPU median {r['a_cpu_median_ms']}, "
                     f"p95 {r.get('a_cpu_p95_ms')}, p99 {r['a_cpu_p99_ms']} ms); {r['seconds']} s")
    return "\n".join(lines)


def save(result: dict[str, Any], path: Path) -> None:
    """The suite's JSON at `path`, and each run appended to bots.jsonl beside it (the history)."""
    save_json(result, path)
    with (path.parent / "bots.jsonl").open("a") as history:
        for r in result["runs"]:
            history.write(json.dumps(r) + "\n")

