"""`domino leaderboard --variant kozel [--by skill|points|places] [--limit 20] [--url URL]`: the archive's
leaderboard (`GET /v1/leaderboard`, docs/tables.md, Players and ratings) in the terminal, a page at a time.

In a terminal each page ends with a prompt: Enter shows the next page, q stops. Read from a pipe (no
terminal), it prints the first page and, when there are more, the `--cursor` that shows the next one.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from urllib.parse import urlencode

from clients.sdk import ProblemError, RestClient, TransportError
from clients.table import leaderboard_lines


def show(api: RestClient, variant: str, by: str, limit: int, cursor: str | None, *, interactive: bool,
         read: Callable[[str], str] = input, write: Callable[[str], None] = print) -> int:
    """Write the board's pages from `cursor` (None: the first) until the last, or until the person stops."""
    first = True
    while True:
        query = {"variant": variant, "by": by, "limit": str(limit), "provisional": "true",  # every rated player
                 **({"cursor": cursor} if cursor else {})}
        page = api.request("GET", "/v1/leaderboard?" + urlencode(query))
        if first:
            write(f"Leaderboard: {variant} (family {page['family']}), by {by}")
            first = False
        lines = leaderboard_lines(page)
        if not lines and cursor is None:
            write("Nobody is rated in this family yet: finish a match against another person.")
        for line in lines:
            write(line)
        cursor = page.get("next")
        if not cursor:
            return 0
        if not interactive:
            write(f"More: --cursor {cursor}")
            return 0
        try:
            answer = read("Enter: the next page, q: stop ").strip().lower()
        except EOFError:
            return 0
        if answer in ("q", "quit"):
            return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="domino leaderboard", description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="kozel", help="a variant; the board is its family's (GET /v1/variants)")
    parser.add_argument("--by", default="skill", choices=["skill", "points", "places"],
                        help="skill (the conservative skill rating), points (the source's rating points: Kozel) "
                             "or places (the Bykovo tournament's official places)")
    parser.add_argument("--limit", type=int, default=20, help="players per page (1-100)")
    parser.add_argument("--cursor", help="start at this page (the `More: --cursor` a page ended with)")
    parser.add_argument("--url", default="http://127.0.0.1:8080", help="the REST gateway (`make run` starts one)")
    args = parser.parse_args(argv)
    if not 1 <= args.limit <= 100:
        parser.error("--limit: 1 to 100")
    try:
        return show(RestClient(args.url), args.variant, args.by, args.limit, args.cursor,
                    interactive=sys.stdin.isatty() and sys.stdout.isatty())
    except TransportError as err:
        print(f"domino leaderboard: no gateway answers at {args.url} ({err}); start one with `make run`",
              file=sys.stderr)
        return 1
    except ProblemError as err:
        print(f"domino leaderboard: {err.detail}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
