"""Quick play (issue 25): `POST /v1/seek` seats a person at a waiting public table of the variant, player
count and clock whose opener's skill is nearest theirs, or opens one for others to find; the filler
makes a waiting table's free seats bots once its wait for people (`bots_after`) is over. Both read the
live store's indexes (`seekable`, `fillable`), so neither depends on what else the lobby holds. Two people
may seek as a pair (issue 41): a party's code, or a bot partner, seats them opposite (`parties`)."""
from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from api_gateway.archive.database import ArchiveUnavailable
from api_gateway.archive.repository import UnknownPlayer
from api_gateway.engine import EngineProblem
from api_gateway.hosting import parties, records
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
#: Seconds a seeker waits for its turn before it seeks all the same (the filler waits out a whole lease).
SEEK_TURN = 3.0


def turn_of(variant: str, players: int, clock_key: str, rated: bool) -> str:
    """The lease that seekers of one key, and the filler of that key's tables, take turns by."""
    return f"seek:{variant}:{players}:{clock_key}:{int(rated)}"


class Matchmaking:
    """Quick play over `tables` (one instance per app)."""

    def __init__(self, tables: Tables, clock: Callable[[], float] = time.time) -> None:
        self.tables = tables
        self._clock = clock

    def seek(self, body: Json, base_url: str) -> Json:
        """A seat at a waiting quick-play table of the seeker's key whose opener's skill is nearest the
        seeker's (then the oldest), or a new one opened for others to find. Seekers of one key take turns
        (a lease in the store, across every gateway): of people seeking at the same moment the first opens
        a table and the next are seated at it, rather than each opening their own. A pair (`party`,
        `partner`) is seated at two opposite seats (`parties`)."""
        clock = clock_setting(body)
        pair = self._pair(body)
        skill = self._skill(body.get("player"), body["variant"])
        rated = bool(body.get("rated", True))
        with self._turn(turn_of(body["variant"], body["players"], records.clock_key(clock), rated), SEEK_TURN):
            if isinstance(body.get("party"), str):
                return self._join_party(body, body["party"], clock, rated)
            return self._seek(body, base_url, clock, skill, rated, pair)

    @contextlib.contextmanager
    def _turn(self, name: str, wait: float) -> Iterator[None]:
        """The seek key's turn (a lease in the store, across every gateway) for what runs inside; taken within
        `wait` seconds, else the work runs all the same (a holder that is stuck: a race, no harm)."""
        store = self.tables.store
        holder = secrets.token_bytes(8)
        waited = time.monotonic() + wait
        while not store.lease(name, holder, LEASE_SECONDS):
            if time.monotonic() > waited:
                break
            time.sleep(0.01)
        try:
            yield
        finally:
            store.release(name, holder)

    def _pair(self, body: Json) -> str | None:
        """How the seeker comes: alone (None), as a party whose partner seeks later with its code ("party"),
        or with a bot partner ("bot"); a pair only where partners exist (400 malformed naming the member)."""
        party, partner = body.get("party"), body.get("partner")
        if isinstance(party, str):
            if partner is not None:
                raise TableRefused("malformed", "partner: a party's code seats you as its maker's partner; leave "
                                                "out partner", "partner")
            return None  # the partner of a party: its table decides (`_join_party`)
        if party is not True and partner is None:
            return None
        member = "party" if party is True else "partner"
        variant = self.tables.matches.variant(body["variant"])  # 404 unknown-variant
        if not parties.has_partnerships(variant):
            known = ", ".join(v["name"] for v in self.tables.matches.variants() if parties.has_partnerships(v))
            raise TableRefused("malformed", f"{member}: {variant['name']} has no partnerships; seek as a pair in "
                                            f"{known}", member)
        if body["players"] != parties.PLAYERS:
            raise TableRefused("malformed", f"{member}: a pair plays two against two: players must be "
                                            f"{parties.PLAYERS}, not {body['players']}", member)
        if (body.get("options") or {}).get(parties.TEAMS) is False:
            raise TableRefused("malformed", f"{member}: a pair plays as partners: leave out options.teams (or make "
                                            "it true)", member)
        return "bot" if partner == "bot" else "party"

    def _seek(self, body: Json, base_url: str, clock: Json | None, skill: float, rated: bool,
              pair: str | None) -> Json:
        variant, players = body["variant"], body["players"]
        join: Json = {k: body[k] for k in ("name", "player") if k in body}
        level = body.get("bots_level") or "greedy"
        waiting = [rec for r in self.tables.store.seekable(variant, players, records.clock_key(clock), SEEKABLE)
                   if (rec := orjson.loads(r.record)).get("rated", True) == rated]
        for rec in sorted(waiting, key=lambda rec: (abs(rec["seek"]["skill"] - skill), rec["created"])):
            seat = parties.seat_for(rec, pair)
            if seat is None:
                continue
            try:
                return self._sit(rec, seat, join, pair, level)
            except TableRefused as exc:
                if exc.name not in ("seat-taken", "table-full", "match-over", "unknown-table", "seat-held"):
                    raise
        wait = body.get("bots_after")
        options = body.get("options") or {}
        table: Json = {"variant": variant, "players": players, "public": pair != "party",
                       "name": f"Quick play: {variant}", "rated": rated,
                       **({"clock": body["clock"]} if body.get("clock") is not None else {})}
        if pair is not None:
            options = {**options, parties.TEAMS: True}
        if pair == "bot":
            table["seats"] = [{"kind": "bot", "level": level} if seat == parties.opposite(0) else {"kind": "open"}
                              for seat in range(players)]
        opened = self.tables.create({**table, "options": options}, base_url,
                                    seek={"skill": skill, "fill_at": None if wait is None else self._clock() + wait,
                                          "level": level})
        table_id = opened["table_id"]
        if pair == "party":
            code, secret = self._claim(table_id, 0, pair, level)
        else:
            code, secret = opened["invites"][0]["code"], None
        joined = self.tables.join(table_id, {**join, "invite": code})
        return {**joined, "opened": True, "party": parties.party_code(table_id, secret)}

    def _sit(self, rec: Json, seat: int, join: Json, pair: str | None, level: str) -> Json:
        """The seeker at `seat` of a waiting table (and for a pair the seat opposite kept or given a bot)."""
        table_id = rec["table_id"]
        if pair is None and rec["public"]:
            return {**self.tables.join(table_id, {**join, "seat": seat}), "opened": False, "party": None}
        code, secret = self._claim(table_id, seat, pair, level)  # a party's table is private: by invite
        try:
            joined = self.tables.join(table_id, {**join, "invite": code})
        except TableRefused:
            if pair is not None:
                def undo(r: Json) -> tuple[None, None]:
                    parties.unclaim(r, seat, pair)
                    return None, None
                self.tables.update(table_id, undo)
            raise
        return {**joined, "opened": False, "party": parties.party_code(table_id, secret)}

    def _claim(self, table_id: str, seat: int, pair: str | None, level: str) -> tuple[str, str | None]:
        """An invite of `seat` for the seeker, and for a pair the seat opposite kept for the partner (its
        party's secret) or a bot's, in one write of the table (`seat-taken`: not free any more)."""
        code, secret = records.new_invite(), records.new_invite() if pair == "party" else None

        def change(rec: Json) -> tuple[None, None]:
            parties.claim(rec, seat, pair, code, secret, level)
            return None, None

        self.tables.update(table_id, change)
        return code, secret

    def _join_party(self, body: Json, code: str, clock: Json | None, rated: bool) -> Json:
        """The partner of a party at the seat its maker kept opposite: `unknown-party` (404) for a code of no
        party here or of another seek key, `party-full` (409) once that seat is taken."""
        table_id, secret = parties.parse_code(code)
        row = self.tables.store.table(table_id) if table_id else None
        rec = orjson.loads(row.record) if row is not None else None
        party = parties.party_of(rec, secret) if rec is not None else None
        if rec is None or party is None:
            raise TableRefused("unknown-party", "no party has this code (never made here, or its table expired)",
                               "party")
        asked = parties.key(body["variant"], body["players"], clock, rated)
        theirs = parties.key(rec["variant"], rec["players"], rec.get("clock"), rec.get("rated", True))
        if asked != theirs:
            raise TableRefused("unknown-party", f"this party plays {theirs}, not {asked}: seek with its variant, "
                                                "players, clock and rated", "party")
        if not parties.waits_for_partner(rec, party):
            raise TableRefused("party-full", parties.FULL, "party")
        join: Json = {k: body[k] for k in ("name", "player") if k in body}
        try:
            joined = self.tables.join(table_id, {**join, "invite": secret})
        except TableRefused as exc:
            if exc.name == "invalid-invite":  # taken meanwhile (a bot, when the wait for people ended)
                raise TableRefused("party-full", parties.FULL, "party") from exc
            raise
        return {**joined, "opened": False, "party": None}

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
            rated = orjson.loads(row.record).get("rated", True)
            # The seek key's turn, as a seeker takes it: a seek opens its table (due at once with bots_after
            # 0), then seats its seeker, then notes the seeker's host app for webhooks. A pass before the seat
            # was taken asked the engine for bots alone (refused); one before the app was noted dealt unseen
            # by the webhooks (CI lost a table-dealt so).
            with self._turn(turn_of(row.variant, row.players, row.clock, rated), LEASE_SECONDS):
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
