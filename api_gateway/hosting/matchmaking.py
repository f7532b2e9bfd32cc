"""Quick play (issue 25): `POST /v1/seek` seats a person at a waiting public table of the variant, player
count and clock whose opener's skill is nearest theirs, or opens one for others to find; the filler
makes a waiting table's free seats bots once its wait for people (`bots_after`) is over. Both read the
live store's indexes (`seekable`, `fillable`), so neither depends on what else the lobby holds."""
from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

import orjson

from api_gateway.archive.database import ArchiveUnavailable
from api_gateway.archive.repository import UnknownPlayer
from api_gateway.engine import EngineProblem
from api_gateway.hosting import records
from api_gateway.hosting.tables import Tables, clock_setting
from api_gateway.http.problems import TableRefused
from api_gateway.notify import notifier
from api_gateway.store import Deal

log = logging.getLogger("api_gateway.hosting.matchmaking")

Json = dict[str, Any]
#: The most waiting tables of one seek key a seek considers (the oldest first).
SEEKABLE = 1000
#: Seconds a seeker holds its key's lease at most (its seek's engine and store calls take far less).
LEASE_SECONDS = 5.0
#: Seconds a seeker waits for its turn before it seeks all the same.
SEEK_TURN = 3.0


class Matchmaking:
    """Quick play over `tables` (one instance per app)."""

    def __init__(self, tables: Tables, clock: Callable[[], float] = time.time) -> None:
        self.tables = tables
        self._clock = clock

    def seek(self, body: Json, base_url: str) -> Json:
        """A seat at a waiting quick-play table of the seeker's key whose opener's skill is nearest the
        seeker's (then the oldest), or a new one opened for others to find. Seekers of one key take turns
        (a lease in the store, across every gateway): of people seeking at the same moment the first opens
        a table and the next are seated at it, rather than each opening their own."""
        clock = clock_setting(body)
        skill = self._skill(body.get("player"), body["variant"])
        rated = bool(body.get("rated", True))
        name = f"seek:{body['variant']}:{body['players']}:{records.clock_key(clock)}:{int(rated)}"
        holder = secrets.token_bytes(8)
        waited = time.monotonic() + SEEK_TURN
        store = self.tables.store
        while not store.lease(name, holder, LEASE_SECONDS):
            if time.monotonic() > waited:  # a holder that is stuck: seek all the same (a race, no harm)
                break
            time.sleep(0.01)
        try:
            return self._seek(body, base_url, clock, skill, rated)
        finally:
            store.release(name, holder)

    def _seek(self, body: Json, base_url: str, clock: Json | None, skill: float, rated: bool) -> Json:
        variant, players = body["variant"], body["players"]
        join: Json = {k: body[k] for k in ("name", "player") if k in body}
        waiting = [rec for r in self.tables.store.seekable(variant, players, records.clock_key(clock), SEEKABLE)
                   if (rec := orjson.loads(r.record)).get("rated", True) == rated]
        for rec in sorted(waiting, key=lambda rec: (abs(rec["seek"]["skill"] - skill), rec["created"])):
            for s in rec["seats"]:
                if s["kind"] == "open" and not s["taken"]:
                    try:
                        return {**self.tables.join(rec["table_id"], {**join, "seat": s["seat"]}), "opened": False}
                    except TableRefused as exc:
                        if exc.name not in ("seat-taken", "table-full", "match-over", "unknown-table", "seat-held"):
                            raise
                    break
        wait = body.get("bots_after")
        opened = self.tables.create({"variant": variant, "players": players, "options": body.get("options") or {},
                                     "public": True, "name": f"Quick play: {variant}", "rated": rated,
                                     **({"clock": body["clock"]} if body.get("clock") is not None else {})},
                                    base_url, seek={"skill": skill,
                                                    "fill_at": None if wait is None else self._clock() + wait,
                                                    "level": body.get("bots_level") or "greedy"})
        joined = self.tables.join(opened["table_id"], {**join, "invite": opened["invites"][0]["code"]})
        return {**joined, "opened": True}

    def _skill(self, assertion: str | None, variant: str) -> float:
        """The seeker's skill in the variant's family (the ordinal, mu - 3 sigma): 0, a newcomer's, for a
        guest, a player not rated yet, or while the archive does not answer."""
        archive = self.tables.archive
        if archive is None or assertion is None:
            return 0.0
        player_id = archive.player_for(assertion)  # a bad assertion: 400 invalid-player
        try:
            player = archive.player(player_id)
        except (UnknownPlayer, ArchiveUnavailable):  # never archived, or the database down: a newcomer's skill
            return 0.0
        family = archive.family(variant)
        rating = next((r for r in player.get("ratings", ()) if r.get("family") == family), None)
        return float(rating["skill"]["ordinal"]) if rating else 0.0

    def fill_due(self) -> int:
        """Quick-play tables whose wait for people is over (`bots_after`): their free seats become bots
        and the match is dealt. A keeper's pass; the tables it filled. A table the engine cannot deal now
        (down, busy) stays as it was, waiting, and is tried again on the next pass; the tables after it
        are still tried on this one."""
        filled = 0
        for row in self.tables.store.fillable(self._clock(), 100):
            try:
                _, rec = self.tables.update(row.table_id, self._fill)
                filled += 1
                notifier.dealt(row.table_id, rec)  # webhooks: "table dealt" to the seats vouched; never raises
            except TableRefused:
                pass  # taken, filled or gone meanwhile
            except EngineProblem as exc:
                log.warning("table %s: its wait for people is over, not filled yet: %s", row.table_id, exc)
        return filled

    def _fill(self, rec: Json) -> tuple[None, Deal | None]:
        if rec["match_id"] is not None:
            raise TableRefused("match-over", "dealt meanwhile")
        level = rec["seek"]["level"]
        for s in rec["seats"]:
            if s["kind"] == "open" and not s["taken"]:
                s.update(kind="bot", level=level, invite=None)
        rec["seek"]["fill_at"] = None
        return None, self.tables.deal(rec) if records.all_seated(rec) else None
