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
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from bench.compiled import ROOT

RESULTS = ROOT / "bench" / "results"


#: Each `domino bench` command: its module (which has `add_arguments`, `run_args` and `format_text`, and
#: `save` when its results are more than one JSON file) and its one line of help.
BENCHES: dict[str, tuple[str, str]] = {
    "engine": ("engine", "rules core: random rounds per second against the peers"),
    "service": ("service", "engine and gateway as real processes under load"),
    "slow-clients": ("slow_clients", "the gateway under 1,000 half-sent requests, against itself calm"),
    "faults": ("faults", "ordinary calls under 50 expert flooders, a frozen engine, the replay bomb"),
    "bots": ("bots", "the bots' strength and speed, level against level, every family"),
    "tables": ("tables", "online tables: apply -> the other seat's stream, one gateway and two on Redis"),
    "lobby": ("lobby", "a lobby page and a seek with many public tables open, on each store"),
    "capacity": ("capacity", "issue 40: people at 4-seat tables ramped until a move is late; idle streams"),
    "state": ("state", "issue 27: a call's cost at a match's end against its start, sizes, a whole sealed match "
                       "through REST"),
    "peers": ("peers", "issue 43: ours against boardgame.io, the same block game, one load tool"),
    "store-soak": ("store_soak", "issue 43: one host at saturation for half an hour: the live store's bytes and "
                                 "moves/s, minute 2 against the last"),
    "flood": ("flood", "issue 37: an ordinary player's create and apply while one client floods tables, seeks and "
                       "tickets, limits off and on"),
    "webhooks": ("webhooks", "issue 38: webhook event -> receiver latency, one sender's deliveries a second, a "
                             "hosted move's cost with and without them"),
}


def _module(what: str) -> Any:
    return importlib.import_module(f"bench.{BENCHES[what][0]}")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="domino bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    for what, (_, help_line) in BENCHES.items():
        q = sub.add_parser(what, help=help_line)
        q.add_argument("--json", action="store_true", help="print the results as one JSON object")
        q.add_argument("--tiny", action="store_true", help="a token workload (for the test suite)")
        q.add_argument("--save", type=Path, help="where to keep the results JSON "
                       "(default bench/results/<kind>.json; nothing with --tiny)")
        q.add_argument("--no-save", action="store_true", help="keep no results file")
        _module(what).add_arguments(q)
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
    bench = _module(args.what)
    result = bench.run_args(args, sys.stderr)
    text = bench.format_text(result)
    save = getattr(bench, "save", save_json)
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
