"""`domino record export|import|replay|check`: match records (docs/records.md) with the rules library.

- ``export STATE`` writes the record of a state (a JSON file holding the state, or an answer with a
  ``state`` member; ``-`` reads stdin): text form, or ``--json``; ``--view`` full, spectator or "seat N".
  Once a round has ended a state keeps only its current round's log: ``--lines FILE`` (repeated, in
  order) gives the lines that left it, each FILE an answer holding ``record_lines`` or one line per
  entry (docs/records.md "The log a state keeps"); they are joined and checked against the state.
- ``import RECORD`` checks every move and prints the match at its end (the JSON state).
- ``replay RECORD --upto N`` prints the state after move N.
- ``check RECORD...`` checks each file and ends with ``N valid, M invalid`` (exit status 1 when any is not).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from engine_service import records
from engine_service.rules import RulesError


def _read(path: str) -> str:
    return sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")


def _export(args: argparse.Namespace) -> int:
    data = json.loads(_read(args.state))
    state = data["state"] if isinstance(data, dict) and isinstance(data.get("state"), dict) else data
    names = None if args.names is None else [n or None for n in args.names.split(",")]
    prior = _joined(args.lines) if args.lines else None
    record = records.export(state, args.view, names, prior)
    sys.stdout.write(json.dumps(records.to_json(record), indent=1) + "\n" if args.json else records.to_text(record))
    return 0


def _joined(paths: list[str]) -> list[str]:
    """The record lines of every file, in order: an answer's ``record_lines``, or a text file's lines."""
    lines: list[str] = []
    for path in paths:
        text = _read(path)
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            lines.extend(data.get("record_lines", []))
        else:
            lines.extend(line for line in text.splitlines() if line)
    return lines


def _import(args: argparse.Namespace) -> int:
    record = records.parse(_read(args.record))
    if record.view != "full":
        records.check(record)
        print(f"valid {record.view} record, {len(record.moves)} moves (a partial record has no state to give)")
        return 0
    print(json.dumps(records.replay(record).to_dict()))
    return 0


def _replay(args: argparse.Namespace) -> int:
    print(json.dumps(records.replay(records.parse(_read(args.record)), args.upto).to_dict()))
    return 0


def _check(args: argparse.Namespace) -> int:
    valid = invalid = 0
    for path in args.records:
        try:
            record = records.parse(_read(path))
            records.check(record)
        except (OSError, UnicodeDecodeError, RulesError) as exc:
            invalid += 1
            print(f"{path}: {exc}")
            continue
        valid += 1
        if not args.quiet:
            print(f"{path}: ok ({record.view}, {len(record.moves)} moves)")
    print(f"{valid} valid, {invalid} invalid")
    return 1 if invalid else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="domino record", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    export = sub.add_parser("export", help="the record of a state")
    export.add_argument("state", help="a JSON file with the state (or an answer holding it); - for stdin")
    export.add_argument("--view", default="full", help="full (default), spectator or 'seat N'")
    export.add_argument("--names", help="the players' names, seat 0 first, comma-separated")
    export.add_argument("--json", action="store_true", help="the JSON form (default: text)")
    export.add_argument("--lines", action="append", metavar="FILE",
                        help="the lines that left the state as rounds ended: an answer with record_lines, or "
                             "one line per entry; repeat in order")
    imp = sub.add_parser("import", help="check a record and print the match at its end")
    imp.add_argument("record", help="a record file (text or JSON form); - for stdin")
    replay = sub.add_parser("replay", help="print the state after a move of a record")
    replay.add_argument("record")
    replay.add_argument("--upto", type=int, help="the move (default: the last)")
    check = sub.add_parser("check", help="check record files; ends with 'N valid, M invalid'")
    check.add_argument("records", nargs="+")
    check.add_argument("-q", "--quiet", action="store_true", help="print only the invalid ones and the total")
    args = parser.parse_args(argv)
    if args.action == "check":
        return _check(args)
    try:
        return {"export": _export, "import": _import, "replay": _replay}[args.action](args)
    except (OSError, ValueError) as exc:  # RulesError is a ValueError; so is bad JSON
        print(f"domino record {args.action}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
