"""The player's inbox (issue 38, docs/tables.md "The inbox"): the live games of one person, with whose turn
it is, the clocks and what happened since their own last move. No Flask here: `api_gateway.http.inbox_routes`
is the REST face.

Who the person is:

- a player the host app vouches for (``app:<user>``, proven by a player assertion): the store's inbox index
  (`TableRecords.inbox`) names the tables where they hold a seat; it is written with each table's record,
  in the same atomic write, so a seat taken or given up is in it or out of it at once, and a move writes
  nothing more (a move does not write the table's record);
- a guest, whose id proves nothing: its seats' credentials, each checked as any call checks it.

Each game costs three reads of the store (the match's version, its seat's last lines, its presence), and a
list is at most `MOST` games: what a phone asks when it opens, not on every move.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from api_gateway.hosting import records
from api_gateway.hosting.presence import seat_presence
from api_gateway.store import MatchExpired, TableRow

Json = dict[str, Any]

#: The most games one inbox lists (the latest first).
MOST = 100
#: The most tables of a player's index one inbox looks at (the latest written): a table whose match ended stays in
#: the index until the table expires (a match's end is no write of the table), so more are read than listed.
SCANNED = 2 * MOST
#: The most credentials a guest sends at once.
MOST_CREDENTIALS = 50
#: The changes of a match read back to count what the seat has not seen (`unread`): a count of more is shown
#: as at least this many, with `unread_more`.
UNREAD_WINDOW = 64
#: A seat's credential as `Tables.join` makes it: ``<table id>.<seat>.<secret>`` (the host key holds no seat).
#: Written as JSON Schema's (ECMA) patterns are, for the OpenAPI document.
CREDENTIAL = re.compile(r"^[0-9a-f]{32}\.[0-9]{1,2}\.[A-Za-z0-9_-]{16,64}$")


@dataclass(frozen=True, slots=True)
class Seat:
    """One seat a person holds: its table's row and record, and the seat's number."""

    row: TableRow
    rec: Json
    seat: int


def unread(lines: Iterable[bytes], seat: int) -> int:
    """The moves of the other seats (people and bots) since `seat`'s own last move, in `lines` (the seat's
    lines of the match's latest changes, oldest first): a move is an event that is a seat's own action."""
    count = 0
    for line in lines:
        for event in orjson.loads(line).get("events") or ():
            if event.get("type") not in records.ACTIONS:
                continue
            who = event.get("seat", event.get("player"))
            count = 0 if who == seat else count + 1
    return count


class Inbox:
    """The inboxes of the live store of `tables` (an `api_gateway.hosting.tables.Tables`)."""

    def __init__(self, tables: Any, clock: Callable[[], float] = time.time) -> None:
        self._tables = tables
        self._clock = clock

    def player_seats(self, player: str) -> list[Seat]:
        """The seats `player` holds, by the store's inbox index (the latest `SCANNED` tables written)."""
        found = []
        for row in self._tables.store.inbox(player, SCANNED):
            rec = orjson.loads(row.record)
            seat = records.seat_of(rec, player)
            if seat is not None:
                found.append(Seat(row, rec, seat))
        return found

    def credential_seats(self, credentials: list[str]) -> tuple[list[Seat], list[int]]:
        """The seats the credentials hold, and the indexes of those that hold none any more (the table expired,
        the seat was given up, or it never held one): a client forgets those."""
        found, gone = [], []
        for i, credential in enumerate(credentials):
            table_id, seat, _ = credential.split(".", 2)
            row = self._tables.store.table(table_id)
            rec = orjson.loads(row.record) if row is not None else None
            if rec is None or not records.holds(rec, credential, seat) or not rec["seats"][int(seat)]["taken"]:
                gone.append(i)
            else:
                found.append(Seat(row, rec, int(seat)))
        return found, gone

    def games(self, seats: Iterable[Seat]) -> list[Json]:
        """The games of `seats` that are not over (each seat once), the seat's turn first, then the latest
        active; at most `MOST`."""
        shown: dict[tuple[str, int], Json] = {}
        for held in seats:
            key = (held.row.table_id, held.seat)
            if key not in shown:
                game = self.game(held)
                if game is not None:
                    shown[key] = game
        ordered = sorted(shown.values(), key=lambda g: (not g["your_turn"], -g["active"], g["table_id"]))
        return ordered[:MOST]

    def game(self, held: Seat) -> Json | None:
        """One game as its seat sees it; None when its match is over (the archive has it) or gone."""
        rec, seat = held.rec, held.seat
        store, now = self._tables.store, self._clock()
        active = float(rec.get("dealt") or rec["created"])
        game: Json = {"table_id": rec["table_id"], "name": rec["name"], "variant": rec["variant"],
                      "players": rec["players"], "seat": seat, "match_id": rec["match_id"], "seq": None,
                      "turn": None, "your_turn": False, "clocks": None, "unread": 0, "unread_more": False}
        presence = None
        if rec["match_id"] is not None:
            match_id = bytes.fromhex(rec["match_id"])
            try:
                hosted = store.hosted(match_id)
                if hosted.over:
                    return None
                lines, over = store.lines(match_id, seat, max(0, hosted.seq - UNREAD_WINDOW + 1))
            except MatchExpired:
                return None
            if over or not lines:
                return None
            last = orjson.loads(lines[-1])
            mine = unread(lines, seat)
            game.update(seq=hosted.seq, turn=last.get("turn"), your_turn=last.get("turn") == seat,
                        clocks=last.get("clocks"), unread=mine,
                        unread_more=hosted.seq >= UNREAD_WINDOW and mine == _moves(lines))
            if hosted.clocks:
                active = max(active, float(orjson.loads(hosted.clocks).get("since") or 0.0))
            presence = seat_presence(store.presence(match_id), records.persons(rec), float(rec.get("dealt") or
                                                                                         rec["created"]), now)
        view = records.view(rec, False, presence)
        game.update(status=view["status"], active=active, seats=view["seats"])
        return game


def _moves(lines: Iterable[bytes]) -> int:
    """Every move in `lines` (whoever made it)."""
    return sum(1 for line in lines for e in orjson.loads(line).get("events") or () if e.get("type") in records.ACTIONS)
