"""`python -m api_gateway.archive`: the operator's commands for the archive database.

    python -m api_gateway.archive upgrade            # migrate GATEWAY_DATABASE to this code's schema
    python -m api_gateway.archive current            # the database's revision, and the code's
    python -m api_gateway.archive check              # exit 1 unless the database is at the code's revision
    python -m api_gateway.archive downgrade REV      # back to revision REV (`base`: no tables)
    python -m api_gateway.archive sign-player USER   # a player assertion (a JWT) for USER (DOMINO_PLAYER_KEY)

The database is ``--database URL``, else ``GATEWAY_DATABASE``, else the embedded
default. The k8s migration Job runs ``upgrade``; it is safe to run again (at the
revision already: nothing to do). Exit status 0, 1 (not at the revision, or the
database unreachable), 2 (bad arguments or settings).

``sign-player`` signs as a host app's server does (docs/security.md, "Player assertions"), with
``DOMINO_PLAYER_KEY``: ``kid:base64secret`` (HS256) or ``kid:ed25519:base64privatekey`` (EdDSA).
Without it, with the newest key of ``GATEWAY_PLAYER_KEYS`` when that is an HMAC secret (the operator
holds the same one); an Ed25519 key there is the public half, which cannot sign.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence

from api_gateway.archive import database
from api_gateway.archive.assertions import sign_assertion
from api_gateway.archive.players import PlayerIdError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m api_gateway.archive", description=__doc__.splitlines()[0])
    p.add_argument("--database", metavar="URL", help="the archive database [GATEWAY_DATABASE, embedded SQLite]")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to connect and for each statement [10]")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("upgrade", help="migrate to this code's revision")
    sub.add_parser("current", help="print the database's revision and the code's")
    sub.add_parser("check", help="exit 1 unless the database is at the code's revision")
    down = sub.add_parser("downgrade", help="migrate back to a revision")
    down.add_argument("revision")
    sign = sub.add_parser("sign-player", help="a player assertion, a JWT (what a host app's server signs), with "
                                              "DOMINO_PLAYER_KEY [the newest HMAC key of GATEWAY_PLAYER_KEYS]")
    sign.add_argument("user")
    sign.add_argument("--lifetime", type=int, default=24 * 3600, help="seconds it is good for [86400]")
    return p


def signing_key(environ: Mapping[str, str]) -> str:
    """The key `sign-player` signs with: DOMINO_PLAYER_KEY, else the newest of GATEWAY_PLAYER_KEYS when it is
    an HMAC secret (PlayerIdError otherwise)."""
    own = environ.get("DOMINO_PLAYER_KEY", "").strip()
    if own:
        return own
    newest = environ.get("GATEWAY_PLAYER_KEYS", "").split(",")[0].strip()
    if not newest:
        raise PlayerIdError("no signing key")
    if ":ed25519:" in newest:
        raise PlayerIdError("the newest key of GATEWAY_PLAYER_KEYS is an Ed25519 public key, which cannot sign: "
                            "give the private one as kid:ed25519:base64privatekey")
    return newest


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "sign-player":
        try:
            print(sign_assertion(signing_key(os.environ), args.user, args.lifetime))
        except PlayerIdError as exc:
            print(f"sign-player: {exc} (set DOMINO_PLAYER_KEY)", file=sys.stderr)
            return 2
        return 0
    url = args.database or os.environ.get("GATEWAY_DATABASE", "").strip() or database.default_url()
    try:
        engine = database.create(url, args.timeout)
    except ValueError as exc:
        print(f"GATEWAY_DATABASE: {exc}", file=sys.stderr)
        return 2
    shown = database.redacted(engine.url)
    try:
        if args.command == "upgrade":
            before = database.current(engine)
            database.upgrade(engine)
            print(f"{shown}: {before or 'none'} -> {database.current(engine)}")
        elif args.command == "downgrade":
            database.downgrade(engine, args.revision)
            print(f"{shown}: now at {database.current(engine) or 'none'}")
        elif args.command == "current":
            print(f"{shown}: at {database.current(engine) or 'none'}, this code needs {database.head()}")
        else:
            database.check_schema(engine)
            print(f"{shown}: at {database.head()}")
    except database.ArchiveUnavailable as exc:
        print(str(exc), file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
