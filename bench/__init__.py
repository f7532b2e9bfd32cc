"""`domino bench`: speed as a measured property, rerunnable by anyone.

    domino bench engine [--seconds S | --games N] [--repeats R] [--compiled auto|yes|no] [--json]
    domino bench service [--seconds S] [--json]
    domino bench slow-clients [--connections N] [--seconds S]
    domino bench faults [--seconds S] [--rounds R] [--freeze S]   # issue 29: flood, frozen engine, replay bomb
    domino bench bots [--variant V] [--matchup A:B] [--pairs N] [--deals N] [--unit round|match]
    domino bench tables [--moves N]   # issue 24: a move to the other seat's stream, one gateway and two
    domino bench lobby [--tables N]   # issue 36: a lobby page and a seek with 20,000 public tables open
    domino bench capacity [--people N,N,...] [--idle-streams N]   # issue 40: people one host seats, idle streams
    domino bench state [--before DIR] [--no-rest]   # issue 27: a call's cost at a match's end against its start
    domino bench peers [--seconds S] [--matches N] [--repeats R]   # issue 43: ours against boardgame.io, one load tool
    domino bench store-soak [--minutes M] [--matches N] [--rate R]   # issue 43: one host at saturation, store size
    domino bench flood [--seconds S] [--flooders N]   # issue 37: a player's calls under a flood, limits off, on
    domino bench webhooks [--tables N] [--deliveries N]   # issue 38: event -> receiver, a sender's rate, a move's cost
    domino bench report          # docs/performance.md and its plot from bench/results/*.json

Every figure is taken on the machine at hand, in one run against its
comparison, and reported as a ratio: the machines are shared and noisy, so an
absolute number from another run means little. Results are printed (as one
JSON object with ``--json``) and saved to ``bench/results/<kind>.json`` unless
``--no-save`` (``--tiny`` runs a token workload for the test suite and saves
nothing unless ``--save`` names a file).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.compiled import ROOT

RESULTS = ROOT / "bench" / "results"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="domino bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--json", action="store_true", help="print the results as one JSON object")
        q.add_argument("--tiny", action="store_true", help="a token workload (for the test suite)")
        q.add_argument("--save", type=Path, help="where to keep the results JSON "
                       "(default bench/results/<kind>.json; nothing with --tiny)")
        q.add_argument("--no-save", action="store_true", help="keep no results file")

    e = sub.add_parser("engine", help="rules core: random rounds per second against the peers")
    common(e)
    e.add_argument("--seconds", type=float, default=1.0, help="length of one slice (default 1.0)")
    e.add_argument("--games", type=int, help="play this many games per slice instead of --seconds")
    e.add_argument("--repeats", type=int, default=7, help="interleaved repetitions (default 7)")
    e.add_argument("--compiled", choices=["auto", "yes", "no"], default="auto",
                   help="also measure build/compiled (mypyc): auto = when current")
    e.add_argument("--group", action="append", help="only these groups (kozel-4, block-2, ...)")

    s = sub.add_parser("service", help="engine and gateway as real processes under load")
    common(s)
    s.add_argument("--seconds", type=float, default=5.0, help="length of one load run (default 5)")
    s.add_argument("--repeats", type=int, default=3, help="interleaved saturation runs per path (default 3)")
    s.add_argument("--grpc-only", action="store_true", help="only the engine's gRPC paths (no gateway)")
    s.add_argument("--compiled", choices=["auto", "yes", "no"], default="auto",
                   help="also an engine on build/compiled (mypyc): auto = when current")
    s.add_argument("--require-tools", action="store_true",
                   help="fail instead of skipping when h2load or wrk is missing")

    w = sub.add_parser("slow-clients", help="the gateway under 1,000 half-sent requests, against itself calm")
    common(w)
    w.add_argument("--connections", type=int, default=1000, help="attacking connections held open (default 1000)")
    w.add_argument("--seconds", type=float, default=5.0, help="length of one load run (default 5)")

    f = sub.add_parser("faults", help="ordinary calls under 50 expert flooders, a frozen engine, the replay bomb")
    common(f)
    f.add_argument("--seconds", type=float, default=10.0, help="length of one calm or flooded phase (default 10)")
    f.add_argument("--rounds", type=int, default=3, help="calm / flooded phases, interleaved (default 3)")
    f.add_argument("--freeze", type=float, default=10.0, help="seconds one engine is SIGSTOPped (default 10)")

    b = sub.add_parser("bots", help="the bots' strength and speed, level against level, every family")
    common(b)
    from bench.bots import add_arguments as bots_arguments

    bots_arguments(b)

    t = sub.add_parser("tables", help="online tables: apply -> the other seat's stream, one gateway and two on Redis")
    common(t)
    t.add_argument("--moves", type=int, default=200, help="applies timed per setup (default 200)")
    t.add_argument("--streams", type=int, default=1000, help="seat streams one worker holds for the memory "
                   "figure (default 1000)")
    t.add_argument("--clock-tables", type=int, default=40, help="tables whose turn clock runs out, per setup "
                   "(default 40)")

    lo = sub.add_parser("lobby", help="a lobby page and a seek with many public tables open, on each store")
    common(lo)
    lo.add_argument("--tables", type=int, default=20000, help="public tables opened first (default 20000)")
    lo.add_argument("--foreign", type=int, default=120, help="public tables of another kind before the seeks "
                    "(default 120)")

    ca = sub.add_parser("capacity", help="issue 40: people at 4-seat tables ramped until a move is late; "
                                         "idle streams")
    common(ca)
    from bench.capacity import add_arguments as capacity_arguments

    capacity_arguments(ca)

    st = sub.add_parser("state", help="issue 27: a call's cost at a match's end against its start, sizes, "
                                      "a whole sealed match through REST")
    common(st)
    st.add_argument("--before", type=Path, help="an earlier copy of the sources, measured beside this one")
    st.add_argument("--matches", type=int, default=5, help="seeded 4-player Kozel matches (default 5)")
    st.add_argument("--repeats", type=int, default=7, help="interleaved timing repeats (default 7)")
    st.add_argument("--no-rest", action="store_true", help="skip the whole matches through REST")
    st.add_argument("--compiled", choices=["auto", "yes", "no"], default="auto",
                    help="also measure each tree's build/compiled: auto = when there")
    pe = sub.add_parser("peers", help="issue 43: ours against boardgame.io, the same block game, one load tool")
    common(pe)
    pe.add_argument("--seconds", type=float, default=10.0, help="measured seconds per load (default 10)")
    pe.add_argument("--matches", type=int, default=32, help="matches played at once (default 32)")
    pe.add_argument("--repeats", type=int, default=3, help="interleaved runs per load (default 3)")
    so = sub.add_parser("store-soak", help="issue 43: one host at saturation for half an hour: the live store's "
                                           "bytes and moves/s, minute 2 against the last")
    common(so)
    so.add_argument("--minutes", type=float, default=30.0, help="length of the soak (default 30)")
    so.add_argument("--matches", type=int, default=32, help="matches played at once (default 32)")
    so.add_argument("--every", type=float, default=30.0, help="seconds between two samples (default 30)")
    so.add_argument("--rate", type=float, help="moves per second, all matches together (default: saturation)")
    fl = sub.add_parser("flood", help="issue 37: an ordinary player's create and apply while one client floods "
                                      "tables, seeks and tickets, limits off and on")
    common(fl)
    fl.add_argument("--seconds", type=float, default=20.0, help="length of one phase (default 20)")
    fl.add_argument("--flooders", type=int, default=8, help="the flooding client's threads (default 8)")
    wh = sub.add_parser("webhooks", help="issue 38: webhook event -> receiver latency, one sender's deliveries "
                                         "a second, a hosted move's cost with and without them")
    common(wh)
    from bench.webhooks import add_arguments as webhooks_arguments

    webhooks_arguments(wh)
    sub.add_parser("report", help="write docs/performance.md and its plot from bench/results/*.json")
    return p


def save_json(result: dict[str, Any], path: Path) -> None:
    """A bench's results as JSON at `path` (its folder made), whole or not at all: written beside it, then
    renamed over it, so a run stopped while writing leaves the last results as they were."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    tmp.replace(path)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.what == "report":
        from bench.report import write_report

        for path in write_report():
            print(f"wrote {path}")
        return 0
    if args.what == "engine":
        from bench import engine

        if args.tiny:
            result = engine.run(seconds=0.05, repeats=1, games=None, compiled=args.compiled,
                                stateless_games=2, stateless_repeat=3, groups=args.group)
        else:
            result = engine.run(seconds=args.seconds, repeats=args.repeats, games=args.games,
                                compiled=args.compiled, groups=args.group)
        text = engine.format_text(result)
        save = save_json
    elif args.what == "slow-clients":
        from bench import slow_clients

        result = slow_clients.run(connections=100 if args.tiny else args.connections,
                                  seconds=1.0 if args.tiny else args.seconds, log=sys.stderr)
        text = slow_clients.format_text(result)
        save = save_json
    elif args.what == "faults":
        from bench import faults

        result = faults.run(seconds=2.0 if args.tiny else args.seconds, rounds=1 if args.tiny else args.rounds,
                            freeze=3.0 if args.tiny else args.freeze, log=sys.stderr)
        text = faults.format_text(result)
        save = save_json
    elif args.what == "tables":
        from bench import tables

        result = tables.run(moves=args.moves, streams=args.streams, clock_tables=args.clock_tables, tiny=args.tiny,
                            log=sys.stderr)
        text = tables.format_text(result)
        save = save_json
    elif args.what == "lobby":
        from bench import lobby

        result = lobby.run(tables=args.tables, foreign=args.foreign, tiny=args.tiny, log=sys.stderr)
        text = lobby.format_text(result)
        save = save_json
    elif args.what == "capacity":
        from bench import capacity

        result = capacity.run_args(args, log=sys.stderr)
        text = capacity.format_text(result)
        save = capacity.save
    elif args.what == "state":
        from bench import state

        result = state.run(before=args.before, matches=args.matches, repeats=args.repeats,
                           with_rest=not args.no_rest, compiled=args.compiled, tiny=args.tiny)
        text = state.format_text(result)
        save = save_json
    elif args.what == "peers":
        from bench import peers

        result = peers.run(seconds=args.seconds, matches=args.matches, repeats=args.repeats, tiny=args.tiny,
                           log=sys.stderr)
        text = peers.format_text(result)
        save = save_json
    elif args.what == "store-soak":
        from bench import store_soak

        result = (store_soak.run(**store_soak.TINY, log=sys.stderr) if args.tiny else
                  store_soak.run(minutes=args.minutes, matches=args.matches, every=args.every, rate=args.rate,
                                 log=sys.stderr))
        text = store_soak.format_text(result)
        save = store_soak.save
    elif args.what == "flood":
        from bench import flood

        result = flood.run(seconds=3.0 if args.tiny else args.seconds, flooders=2 if args.tiny else args.flooders,
                           log=sys.stderr)
        text = flood.format_text(result)
        save = save_json
    elif args.what == "webhooks":
        from bench import webhooks

        result = webhooks.run(args.tables, args.deliveries, args.applies, args.repeats, args.tiny, args.pace,
                              log=sys.stderr)
        text = webhooks.format_text(result)
        save = save_json
    elif args.what == "bots":
        from bench import bots

        result = bots.run(args, log=sys.stderr)
        text = bots.format_text(result)
        save = bots.save
    else:
        from bench import service

        result = service.run(seconds=args.seconds, tiny=args.tiny, require_tools=args.require_tools,
                             repeats=args.repeats, grpc_only=args.grpc_only, compiled=args.compiled)
        text = service.format_text(result)
        save = save_json
    result["command"] = "domino bench " + " ".join(argv)
    target = args.save or (None if args.tiny or args.no_save else RESULTS / f"{args.what}.json")
    if target is not None and not args.no_save:
        save(result, target)
    if args.json:
        print(json.dumps(result))
    else:
        print(text)
        if target is not None and not args.no_save:
            print(f"results kept in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
