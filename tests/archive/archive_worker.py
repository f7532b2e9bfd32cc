"""A process that archives one finished match, for the tests where processes race or die.

    python archive_worker.py '{"database": URL, "outbox": URL, "mode": MODE, "match_id": ID,
                               "seats": [...], "record": FILE, "start_at": UNIX_TIME}'

It opens the archive and checks its schema first, waits until `start_at` (so that
several workers call `finish` at the same moment), then archives and prints
``{"outcome": ...}``. `mode` instruments the one transaction (a subclass of the
repository, nothing in the gateway's code):

- ``plain``: as the gateway does it;
- ``hold``: sleeps 0.5 s inside the transaction, before its players are written
  and locked, so that a rival's transaction is open at the same time;
- ``die``: prints ``mid`` once the first player's rating is written (not
  committed) and sleeps, for the test to SIGKILL it there.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Connection

from api_gateway.archive import database
from api_gateway.archive.outbox import open_outbox
from api_gateway.archive.repository import Repository
from api_gateway.archive.results import FinishedMatch
from api_gateway.archive.service import Archive


class Holding(Repository):
    def _ensure_players(self, conn: Connection, *args: Any) -> None:
        time.sleep(0.5)
        super()._ensure_players(conn, *args)


class Dying(Repository):
    def _write_ratings(self, conn: Connection, m: FinishedMatch, before: Any, after: Any) -> None:
        first = FinishedMatch(m.match_id, m.variant, m.family, m.seats[:1], m.names, m.result, m.record,
                              m.timed_out, m.finished_at)
        super()._write_ratings(conn, first, before, after)
        print("mid", flush=True)
        time.sleep(60)


def main() -> None:
    args = json.loads(sys.argv[1])
    kind = {"plain": Repository, "hold": Holding, "die": Dying}[args["mode"]]
    archive = Archive(kind(database.create(args["database"])), open_outbox(args["outbox"]),
                      lambda variant: args["family"])
    archive._check()  # connected and checked before the start line
    record = Path(args["record"]).read_bytes()
    while time.time() < args["start_at"]:
        time.sleep(0.001)
    outcome = archive.finish(args["match_id"], args["seats"], record)
    print(json.dumps({"outcome": outcome}), flush=True)
    archive.close()


if __name__ == "__main__":
    main()
