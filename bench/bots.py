"""Strength and speed of the bots (issue 15): seat-swapped pairs of the same deal, level against level.

Matching games: each pair deals one round twice from the same seed, level A in
seat 0 then in seat 1 (2 players); a round is won by the side with the better
round score (bots/matching/outcome.py: points gained in the counting games,
fewer points charged elsewhere), a tie counts half. Kingdomino: 2 players as
seat-swapped pairs of a game; 4 players as one level against three of the
other, the deal played four times with level A in each seat; first place (a
shared first counts 1/k).

Reports A's score rate with two 95% intervals: Wilson over rounds (as if
independent) and a normal interval over the pairs' means (what the pairing
gives), and the move times of level A (median, p99; wall clock and this
process's CPU time, which a busy machine inflates less), counting only the
moves with a choice. Examples:

    python bench/bots.py matching kozel --a expert --b greedy --pairs 1000
    python bench/bots.py kingdomino --players 4 --a expert --b greedy --deals 10
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine_service.bots import MATCHING_DEFAULT, Budget, kingdomino_default, suggest  # noqa: E402
from engine_service.bots.observe import SeatLog  # noqa: E402
from engine_service.rules import Kingdomino, Match  # noqa: E402


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


def play_round(variant: str, seed: int, levels: list[str], budget: Budget | None, bot_seed: int,
               times: dict[str, list[float]]) -> list[int]:
    """Deal round 1 of a 2-player match from `seed`, seats playing `levels`; the sides' round scores."""
    match, events = Match.new(variant, len(levels), seed=seed)
    log = SeatLog()
    log.record(events)
    rnd = match.round
    assert rnd is not None
    start = list(match.ledger.scores)
    while not rnd.over and not match.match_over:
        seat = match.to_move
        view = log.view(match, seat)
        t, c = time.perf_counter(), time.process_time()
        action = suggest(view, levels[seat], budget=budget, seed=bot_seed)
        if len(view["legal"]) > 1:
            times[levels[seat]].append(time.perf_counter() - t)
            times[levels[seat] + ":cpu"].append(time.process_time() - c)
        log.record(match.apply(action))
    fam = match.family
    if fam.counts:
        return [a - b for a, b in zip(match.ledger.scores, start)]
    scores = [0] * fam.sides
    for s, p in enumerate(rnd.round_points or []):
        scores[fam.side_of(s)] -= p
    return scores


def bench_matching(args: argparse.Namespace) -> dict[str, Any]:
    budget = Budget(args.budget) if args.budget else None
    times: dict[str, list[float]] = {args.a: [], args.b: [], args.a + ":cpu": [], args.b + ":cpu": []}
    rounds = wins = ties = 0
    pair_means: list[float] = []
    started = time.perf_counter()
    for i in range(args.pairs):
        seed = args.seed * 1_000_003 + i
        result = 0.0
        for a_seat in (0, 1):
            levels = [args.b, args.b]
            levels[a_seat] = args.a
            scores = play_round(args.variant, seed, levels, budget, args.seed + i, times)
            mine, theirs = scores[a_seat], scores[1 - a_seat]
            rounds += 1
            if mine > theirs:
                wins += 1
                result += 1
            elif mine == theirs:
                ties += 1
                result += 0.5
        pair_means.append(result / 2)
        if args.progress and (i + 1) % args.progress == 0:
            print(f"  {i + 1} pairs: {(wins + ties / 2) / rounds:.3f}", file=sys.stderr, flush=True)
    score = wins + ties / 2
    return _report(args, "matching", rounds, wins, ties, score, pair_means, times, started)


def play_kingdomino(players: int, seed: int, levels: list[str], budget: Budget | None, bot_seed: int,
                    times: dict[str, list[float]]) -> list[int]:
    """One game from `seed`, players playing `levels`; the winners."""
    game, _events = Kingdomino.new(players, seed=seed)
    while not game.game_over:
        p = game.to_move
        assert p is not None
        view = game.view(p)
        t, c = time.perf_counter(), time.process_time()
        action = suggest(view, levels[p], budget=budget, seed=bot_seed)
        if len(view["legal"]) > 1:
            times[levels[p]].append(time.perf_counter() - t)
            times[levels[p] + ":cpu"].append(time.process_time() - c)
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
    if args.jobs > 1:
        # Deals in worker processes (each measures its own CPU time); results in deal order.
        import multiprocessing
        pool = multiprocessing.Pool(args.jobs)
        outcomes = pool.imap(_deal_job, jobs)
    else:
        pool = None
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
        "variant": getattr(args, "variant", "kingdomino"),
        "players": getattr(args, "players", 2),
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
        "a_cpu_p99_ms": round(1000 * percentile(a_cpu, 0.99), 1) if a_cpu else None,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="kind", required=True)
    m = sub.add_parser("matching", help="a matching game, 2 players, seat-swapped pairs of rounds")
    m.add_argument("variant")
    m.add_argument("--pairs", type=int, default=1000)
    k = sub.add_parser("kingdomino", help="Kingdomino, every seat in turn on the same deal")
    k.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    k.add_argument("--deals", type=int, default=20)
    k.add_argument("--jobs", type=int, default=1, help="worker processes for the deals (CPU times stay per process)")
    for p in (m, k):
        p.add_argument("--a", default="expert")
        p.add_argument("--b", default="greedy")
        p.add_argument("--budget", type=int, default=0, help="iterations per decision (0: the default)")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--progress", type=int, default=0, help="print the running rate every N pairs")
        p.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = bench_matching(args) if args.kind == "matching" else bench_kingdomino(args)
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{report['variant']} {report['players']}p {args.a} vs {args.b}: {report['rate']:.3f} of "
              f"{report['games']} (wins {report['wins']}, ties {report['ties']}); 95% Wilson "
              f"{report['wilson95'][0]:.3f}-{report['wilson95'][1]:.3f}, paired "
              f"{report['paired95'][0]:.3f}-{report['paired95'][1]:.3f}; {args.a} move median "
              f"{report['a_median_ms']} ms, p99 {report['a_p99_ms']} ms (CPU {report['a_cpu_median_ms']}, "
              f"{report['a_cpu_p99_ms']} ms); {report['seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
