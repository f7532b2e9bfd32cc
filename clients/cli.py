"""The `domino` command line: run scenarios, start services, run benchmarks."""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

#: The commands that are programs of their own, each flag going to them: the module whose
#: `main(argv)` runs each, imported only when it runs (`play` and `bench` are dispatched apart).
_PROGRAMS = {
    "leaderboard": "clients.leaderboard",
    "record": "clients.record_cli",
    "soak": "clients.soak",
    "crosscheck": "clients.crosscheck",
}


def _conformance(args: argparse.Namespace) -> int:
    from clients.conformance.runner import main as run

    return run(args)


def _serve(args: argparse.Namespace, rest: list[str]) -> int:
    if args.what == "engine":
        from engine_service.server import main as serve_engine

        return serve_engine(rest)
    if args.what == "gateway":
        # The gateway is its own program (its image holds no engine and no clients): become it.
        os.execv(sys.executable, [sys.executable, "-m", "api_gateway", *rest])
    from clients.serve_all import main as serve_all

    return serve_all(rest)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="domino", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    conf = sub.add_parser("conformance", help="run scenario files against the library or a service")
    conf.add_argument("paths", nargs="+", help="scenario files or folders")
    where = conf.add_mutually_exclusive_group()
    where.add_argument("--grpc", metavar="HOST:PORT", help="run through the gRPC engine")
    where.add_argument("--rest", metavar="URL", help="run through the REST gateway")
    conf.add_argument("-q", "--quiet", action="store_true", help="print only failures and the total")

    # No -h of its own: `domino serve all --help` is the service's help, with every flag.
    serve = sub.add_parser("serve", help="start a service: engine, gateway or all (`domino serve all --help`)",
                           add_help=False)
    serve.add_argument("what", choices=["engine", "gateway", "all"])

    sub.add_parser("crosscheck", help="play seeded block games against OpenSpiel and compare (flags go to it)",
                   add_help=False)

    sub.add_parser("bench", help="benchmarks: `domino bench engine|service|report` (flags go to it)",
                   add_help=False)

    sub.add_parser("play", help="play against the computer in the terminal: `domino play --variant kozel "
                                "--players 4 --bots expert,greedy,random`, a seat of an online table: `--join "
                                "LINK`, back to it: `--resume`; a hosted tournament: `--join TOURNAMENT_LINK` or `--tournaments`; in Russian "
                                "or English: `--lang ru|en` (flags go to it)",
                   add_help=False)
    sub.add_parser("leaderboard", help="the archive's best players of a variant: `domino leaderboard --variant "
                                       "kozel [--url URL]`, a page at a time (flags go to it)", add_help=False)
    sub.add_parser("record", help="match records: `domino record export|import|replay|check` (docs/records.md)",
                   add_help=False)

    sub.add_parser("soak", help="every variant, both modes, for minutes, memory watched (flags go to it)",
                   add_help=False)

    args, rest = parser.parse_known_args(argv)
    if args.command == "bench":
        return _bench(rest)
    if args.command == "play":
        from clients.play import main as play

        return play(rest)
    if args.command in _PROGRAMS:
        program: Callable[[list[str]], int] = importlib.import_module(_PROGRAMS[args.command]).main
        return program(rest)
    if args.command == "conformance":
        if rest:
            parser.error("unrecognized arguments: " + " ".join(rest))
        return _conformance(args)
    return _serve(args, rest)


def _bench(rest: list[str]) -> int:
    """Run `domino bench`: the benchmarks live in the checkout's top-level `bench/`, not in the SDK.

    They are not part of the installed distribution (a third party installing the SDK gets none of
    them), so the checkout this `clients/` belongs to is put on the path when it has them.
    """
    import sys
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[1]
    if not (checkout / "bench" / "__init__.py").exists():
        print("domino bench runs from a checkout of the repository: bench/ is not in the installed package",
              file=sys.stderr)
        return 2
    if str(checkout) not in sys.path:
        sys.path.insert(0, str(checkout))
    from bench import main as bench

    return bench(rest)


if __name__ == "__main__":
    sys.exit(main())
