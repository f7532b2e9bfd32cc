"""Online tables (issue 24, docs/tables.md): people on different devices play one sealed match through
the gateway alone. No Flask here: `api_gateway.tables_routes` is the REST face, this is what it does.

- A table is a record in the live store (`store.TableRow`, JSON written here): its variant, seats
  (open for a person, or a bot with its level), invites and credentials (hashed: the store never
  holds one that works), the current match. Every change is a compare-and-set of the record's
  version (`Tables._update`): two people racing for the last seat, exactly one write wins and the
  other is read again and refused (`seat-taken`).
- The match is dealt (the engine's NewMatch, sealed, with ``"seat_lines": true``) when the last open
  seat is taken, and created in the store **in the same write** as the table's record (`store.Deal`).
- The store keeps, per hosted match, its latest token and one line per viewer per version (each
  seat's, then the public's for the host and spectators): what `Matches` writes with every change
  (`store.Hosted`). A credential alone reaches the match: the token comes from the store, the seat
  key is made from it (`tokens.seat_key`), and the call is the ordinary sealed one.
- Credentials: ``<table id>.<seat>.<secret>`` for a seat, ``<table id>.host.<secret>`` for the host
  key; only their SHA-256 is kept. The table id in front tells a credential of another table
  (`wrong-table`) from one that never was (`invalid-credential`).
- Invites: 8 characters, one per open seat not taken, single use (spent when the seat is taken).
- Stream tickets: 30 s, single use, kept hashed in the store (`store.put_ticket`/`take_ticket`),
  for a browser's EventSource which cannot send an Authorization header.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import orjson

from api_gateway import metrics
from api_gateway.archive.database import ArchiveUnavailable
from api_gateway.archive.repository import UnknownPlayer
from api_gateway.clocks import Clocks, ClockSetting, ClockSettingError
from api_gateway.engine import EngineMalformed, EngineProblem
from api_gateway.matches import MATCH_ID_BYTES, Matches, hosted_lines
from api_gateway.problems import SealedForbidden, TableRefused, UnknownMatch
from api_gateway.store import Deal, Hosted, HostedMatch, MatchExpired, StaleToken, StoreUnavailable, TableRow
from api_gateway.tokens import HOST, TokenError, host_key, new_sealed, seat_key

log = logging.getLogger("api_gateway.tables")

Json = dict[str, Any]
INVITE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud or typed from a screen
INVITE_CHARS = 8
TICKET_TTL = 30
#: The level of the bot that plays a seat its person left, on a table with ``on_leave: "bot"``.
LEAVE_BOT = "greedy"
_ATTEMPTS = 20
#: Seconds after a hosted match ends before any gateway archives it, when the one that made the last move
#: has not confirmed it archived: more than that move's engine and database calls may take.
ARCHIVE_AFTER = 30.0


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _invite() -> str:
    return "".join(secrets.choice(INVITE_ALPHABET) for _ in range(INVITE_CHARS))


def _match_bytes(match_id: str) -> bytes:
    try:
        raw = bytes.fromhex(match_id)
    except ValueError:
        raw = b""
    if len(raw) != MATCH_ID_BYTES:
        raise UnknownMatch(match_id)
    return raw


@dataclass(frozen=True, slots=True)
class SeatContext:
    """Who is calling about a hosted match: its store record, its table, and the seat (None: the host)."""

    match_id: str
    hosted: HostedMatch
    table: Json
    seat: int | None


class Tables:
    """The tables of the store `matches` uses (one instance per app)."""

    def __init__(self, matches: Matches, archive: Any = None, clock: Callable[[], float] = time.time,
                 archive_after: float = ARCHIVE_AFTER) -> None:
        self.matches = matches
        self.archive = archive
        self._clock = clock
        self.archive_after = archive_after
        matches.on_hosted_over = self._archive
        matches.hosting = self._hosting

    @property
    def store(self) -> Any:
        self.matches.keys  # noqa: B018 - 501 when sealed mode is off: tables host sealed matches
        return self.matches.store

    # ------------------------------------------------------------ records

    def _row(self, table_id: str) -> tuple[TableRow, Json]:
        row = self.store.table(table_id) if len(table_id) <= 64 else None
        if row is None:
            raise TableRefused("unknown-table", f"no table {table_id[:64]!r} (never opened here, or expired)",
                               "table_id")
        return row, orjson.loads(row.record)

    def _over(self, rec: Json) -> bool:
        if rec["match_id"] is None:
            return False
        try:
            return bool(self.store.hosted(bytes.fromhex(rec["match_id"])).over)
        except MatchExpired:
            return True

    def _update(self, table_id: str, change: Callable[[Json], tuple[Any, Deal | None]]) -> tuple[Any, Json]:
        """Apply `change` to the table's record and write it if nobody wrote meanwhile (else again, from
        the new record): what `change` answered, and the record written."""
        for _ in range(_ATTEMPTS):
            row, rec = self._row(table_id)
            result, deal = change(rec)
            if self.store.put_table(_table_row(rec, row.version + 1), deal):
                return result, rec
        raise StoreUnavailable(f"table {table_id}: {_ATTEMPTS} writes in a row lost to others")

    def view(self, rec: Json, over: bool | None = None) -> Json:
        """The table as anyone holding its id sees it (no hash; each taken seat's player id, public as on
        the leaderboard, so a client can show the player's rating beside the name)."""
        if over is None:
            over = self._over(rec)
        seats = []
        waiting = False
        for s in rec["seats"]:
            bot = s["level"] if s["kind"] == "bot" else s.get("bot")
            if s["kind"] == "open" and not s["taken"] and not (bot and rec["match_id"]):
                waiting = True
            seats.append({"seat": s["seat"], "kind": s["kind"], "level": bot,
                          "taken": s["kind"] == "bot" or s["taken"],
                          "name": s["name"] if s["taken"] else (f"{bot} bot" if bot else None),
                          "player": s.get("player") if s["kind"] == "open" and s["taken"] else None})
        status = "over" if over else "waiting" if waiting or rec["match_id"] is None else "playing"
        return {"table_id": rec["table_id"], "name": rec["name"], "variant": rec["variant"],
                "players": rec["players"], "options": rec["options"], "public": rec["public"],
                "on_leave": rec["on_leave"], "clock": rec.get("clock"), "seats": seats, "status": status,
                "match_id": rec["match_id"],
                "matches": rec["matches"], "created": int(rec["created"])}

    # ------------------------------------------------------------ credentials

    def _who(self, rec: Json, credential: str | None) -> int | None:
        """The seat a credential holds at this table, None for its host key; refusals as the spec says."""
        if not credential:
            raise TableRefused("invalid-credential", "send the seat's credential or the host key as "
                                                     "Authorization: Bearer <value>")
        table_id, _, rest = credential.partition(".")
        who, _, _ = rest.partition(".")
        if table_id != rec["table_id"]:
            other = self.store.table(table_id) if 0 < len(table_id) <= 64 else None
            if other is not None and self._matches(orjson.loads(other.record), credential, who):
                raise TableRefused("wrong-table", "this credential is another table's", "Authorization")
            raise TableRefused("invalid-credential", "not a credential of this service (or it was given up "
                                                     "when its seat was left)")
        if not self._matches(rec, credential, who):
            raise TableRefused("invalid-credential", "not a credential of this table (or it was given up "
                                                     "when its seat was left)")
        return None if who == HOST else int(who)

    @staticmethod
    def _matches(rec: Json, credential: str, who: str) -> bool:
        digest = _hash(credential)
        if who == HOST:
            return hmac.compare_digest(rec["host"], digest)
        if not who.isdigit() or int(who) >= len(rec["seats"]):
            return False
        stored = rec["seats"][int(who)].get("cred")
        return stored is not None and hmac.compare_digest(stored, digest)

    # ------------------------------------------------------------ tables

    def create(self, body: Json, base_url: str, seek: Json | None = None) -> Json:
        variant, players = body["variant"], body["players"]
        options = body.get("options") or {}
        specs = body.get("seats") or [{"kind": "open"}] * players
        if len(specs) != players:
            raise TableRefused("malformed", f"seats: one entry per seat ({players}), not {len(specs)}",
                               "seats")
        if not any(s["kind"] == "open" for s in specs):
            raise TableRefused("malformed", "seats: at least one seat must be open for a person", "seats")
        try:
            clock = ClockSetting.from_json(body["clock"]).to_json() if body.get("clock") is not None else None
        except ClockSettingError as exc:
            raise TableRefused("malformed", str(exc), exc.field) from None
        found = self.matches.variant(variant)  # 404 unknown-variant
        if clock is not None and not found.get("timeout_rule"):
            _check_clock_without_rule(variant, clock, sum(1 for s in specs if s["kind"] == "open"))
        # The engine checks players and options now (400), not when the last seat is taken.
        self.matches.engine.call("NewMatch", {"variant": variant, "players": players, "options": options,
                                              "seed": 0})
        table_id = secrets.token_hex(16)
        host = f"{table_id}.{HOST}.{secrets.token_urlsafe(24)}"
        invites: list[Json] = []
        seats = []
        for i, spec in enumerate(specs):
            seat: Json = {"seat": i, "kind": spec["kind"], "level": spec.get("level") or "greedy"
                          if spec["kind"] == "bot" else None, "taken": False, "name": None, "cred": None,
                          "invite": None, "player": None, "bot": None}
            if spec["kind"] == "open":
                code = _invite()
                seat["invite"] = _hash(code)
                invites.append(self._invite_answer(table_id, i, code, base_url))
            seats.append(seat)
        rec: Json = {"table_id": table_id, "name": body.get("name"), "variant": variant, "players": players,
                     "options": options, "public": bool(body.get("public", False)),
                     "on_leave": body.get("on_leave") or "wait", "clock": clock, "seek": seek,
                     "created": self._clock(),
                     "host": _hash(host),
                     "seats": seats, "match_id": None, "matches": 0}
        if not self.store.put_table(_table_row(rec, 1)):
            raise StoreUnavailable("a new table's id was taken")  # 128 random bits: never
        return {"table_id": table_id, "host_key": host, "invites": invites, "table": self.view(rec, False)}

    @staticmethod
    def _invite_answer(table_id: str, seat: int, code: str, base_url: str) -> Json:
        return {"seat": seat, "code": code, "link": f"{base_url.rstrip('/')}/play?table={table_id}&invite={code}"}

    def get(self, table_id: str) -> Json:
        return self.view(self._row(table_id)[1])

    def lobby(self, variant: str | None, limit: int, cursor: str | None) -> Json:
        before: tuple[float, str] | None = None
        if cursor:
            created, _, table_id = cursor.partition("_")
            try:
                before = (float(created), table_id)
            except ValueError:
                raise TableRefused("bad-cursor", "cursor: pass the next_cursor of the previous page as it came",
                                   "cursor") from None
        rows = self.store.lobby(variant, limit + 1, before)
        page = rows[:limit]
        tables = [self.view(orjson.loads(r.record)) for r in page]
        nxt = f"{page[-1].created!r}_{page[-1].table_id}" if len(rows) > limit else None
        return {"tables": tables, "next_cursor": nxt}

    def _deal(self, rec: Json) -> Deal:
        """A new match for the table's seats: sealed, every viewer's first line, the store's `Deal`."""
        bots = [{"seat": s["seat"], "level": s["level"] if s["kind"] == "bot" else s["bot"]}
                for s in rec["seats"] if s["kind"] == "bot" or (not s["taken"] and s.get("bot"))]
        reply = self.matches.engine.call("NewMatch", {
            "variant": rec["variant"], "players": rec["players"], "options": rec["options"], "bots": bots,
            "view_as": HOST, "seat_lines": True})
        sealed = new_sealed(reply.state)
        token = self.matches.keys.seal(sealed)
        rec["match_id"] = sealed.match_id_hex
        rec["matches"] += 1
        hosted = Hosted(token, hosted_lines(0, reply))
        if rec.get("clock") is not None:
            now = self._clock()
            turn = orjson.loads(reply.watcher).get("turn")
            hosted = _clocked(hosted, Clocks.start(ClockSetting.from_json(rec["clock"]), rec["players"], turn, now),
                              now)
        return Deal(sealed.match_id, reply.public, hosted)

    # ------------------------------------------------------------ quick play (issue 25)

    def seek(self, body: Json, base_url: str) -> Json:
        """`POST /v1/seek`: a seat at a public quick-play table of the variant and player count whose
        opener's skill is nearest the seeker's (then the oldest), or a new one opened for others to
        find. Racing seekers: a seat taken meanwhile sends the seeker on to the next table."""
        variant, players = body["variant"], body["players"]
        skill = self._skill(body.get("player"), variant)
        join: Json = {k: body[k] for k in ("name", "player") if k in body}
        found = [orjson.loads(r.record) for r in self.store.seekable(variant, players,
                                                                      _clock_key(self._clock_setting(body)), SEEKABLE)]
        near = sorted(found, key=lambda rec: (abs(rec["seek"]["skill"] - skill), rec["created"]))
        for rec in near:
            for s in rec["seats"]:
                if s["kind"] == "open" and not s["taken"]:
                    try:
                        return {**self.join(rec["table_id"], {**join, "seat": s["seat"]}), "opened": False}
                    except TableRefused as exc:
                        if exc.name not in ("seat-taken", "table-full", "match-over", "unknown-table"):
                            raise
                    break
        wait = body.get("bots_after")
        opened = self.create({"variant": variant, "players": players, "options": body.get("options") or {},
                              "public": True, "name": f"Quick play: {variant}",
                              **({"clock": body["clock"]} if body.get("clock") is not None else {})}, base_url,
                             seek={"skill": skill, "fill_at": None if wait is None else self._clock() + wait,
                                   "level": body.get("bots_level") or "greedy"})
        joined = self.join(opened["table_id"], {**join, "invite": opened["invites"][0]["code"]})
        return {**joined, "opened": True}

    @staticmethod
    def _clock_setting(body: Json) -> Json | None:
        try:
            return ClockSetting.from_json(body["clock"]).to_json() if body.get("clock") is not None else None
        except ClockSettingError as exc:
            raise TableRefused("malformed", str(exc), exc.field) from None

    def _skill(self, assertion: str | None, variant: str) -> float:
        """The seeker's skill in the variant's family (the ordinal, mu - 3 sigma): 0, a newcomer's, for a
        guest, a player not rated yet, or while the archive does not answer."""
        if self.archive is None or assertion is None:
            return 0.0
        player_id = self.archive.player_for(assertion)  # a bad assertion: 400 invalid-player
        try:
            player = self.archive.player(player_id)
        except (UnknownPlayer, ArchiveUnavailable):  # never archived, or the database down: a newcomer's skill
            return 0.0
        family = self.archive.family(variant)
        rating = next((r for r in player.get("ratings", ()) if r.get("family") == family), None)
        return float(rating["skill"]["ordinal"]) if rating else 0.0

    def fill_due(self) -> int:
        """Quick-play tables whose wait for people is over (`bots_after`): their free seats become bots
        and the match is dealt. What the keeper calls once a second; the tables it filled. A table the
        engine cannot deal now (down, busy) stays as it was, waiting, and is tried again on the next
        pass; the tables after it are still tried on this one."""
        filled = 0
        now = self._clock()
        for row in self.store.fillable(now, 100):
            rec = orjson.loads(row.record)
            if rec["match_id"] is not None:
                continue
            try:
                self._update(rec["table_id"], self._fill)
                filled += 1
            except TableRefused:
                pass  # taken, filled or gone meanwhile
            except EngineProblem as exc:
                log.warning("table %s: its wait for people is over, not filled yet: %s", rec["table_id"], exc)
        return filled

    def _fill(self, rec: Json) -> tuple[None, Deal | None]:
        if rec["match_id"] is not None:
            raise TableRefused("match-over", "dealt meanwhile")
        level = rec["seek"]["level"]
        for s in rec["seats"]:
            if s["kind"] == "open" and not s["taken"]:
                s.update(kind="bot", level=level, invite=None)
        rec["seek"]["fill_at"] = None
        return None, self._deal(rec) if self._all_seated(rec) else None

    # ------------------------------------------------------------ turn clocks (issue 25, api_gateway.clocks)

    def _hosting(self, match_id: bytes, seq: int, token: str, reply: Any,
                 change: Callable[[Clocks, float], Clocks] | None = None) -> Hosted:
        """What the store keeps of a hosted match's change (`Matches.hosting`): the token and every
        viewer's line, and with a turn clock its clocks moved on (the seat that acted charged, the seat
        now to act running; none between rounds and at the end), shown in every line. The change that
        ends the match is written due for archiving `archive_after` seconds on (`archive_due`), in case
        the gateway making it fails to archive it first."""
        hosted = Hosted(token, hosted_lines(seq, reply))
        stored = self.store.hosted(match_id).clocks  # this version's: the advance fails if another came
        now = self._clock()
        if stored:
            clocks = Clocks.load(orjson.loads(stored))
            turn = None if reply.over else orjson.loads(reply.watcher).get("turn")
            if change is not None:
                clocks = change(clocks, now)
                if turn != clocks.running:
                    clocks = clocks.moved(turn, now)
            else:
                clocks = clocks.moved(turn, now)
            hosted = _clocked(hosted, clocks, now)
        if reply.over:
            hosted = replace(hosted, deadline=now + self.archive_after)
        return hosted

    def expire_due(self) -> int:
        """Apply every turn clock that ran out (the variant's timeout, or a bot on autopilot): what each
        gateway worker's `ClockKeeper` calls a few times a second. Exactly once across gateways: the
        timeout is a change of the match from the version whose clock ran out (compare-and-set), so of
        two gateways applying it one wins and the other is refused as stale. The number applied here."""
        applied = 0
        for match_id in self.store.due(self._clock(), 50):
            try:
                hosted = self.store.hosted(match_id)
            except MatchExpired:
                self.store.forget_due(match_id)
                continue
            if hosted.over or not hosted.clocks:
                continue
            clocks = Clocks.load(orjson.loads(hosted.clocks))
            seat = clocks.running
            if seat is None or not clocks.expired(self._clock()):
                continue
            try:
                outcome = self._expire(hosted, clocks, seat)
            except StaleToken:
                outcome = "lost"  # another gateway applied it, or the seat moved at the last moment
            except (EngineProblem, StoreUnavailable) as exc:
                log.warning("match %s: seat %d's clock ran out, not applied yet: %s", match_id.hex(), seat, exc)
                outcome = "failed"
            except TokenError as exc:  # no key of this gateway opens it: the other clocks still run out
                log.error("match %s: seat %d's clock ran out, not applied: its token cannot be opened "
                          "(sealed with a key not in STATE_TOKEN_KEYS?): %s", match_id.hex(), seat, exc)
                outcome = "failed"
            except Exception:  # a bug in one match's clock must not stop the clocks due after it
                log.exception("match %s: seat %d's clock ran out, not applied", match_id.hex(), seat)
                outcome = "failed"
            metrics.CLOCK_TIMEOUTS.labels(outcome).inc()
            applied += outcome in ("timeout", "autopilot")
        return applied

    def _expire(self, hosted: HostedMatch, clocks: Clocks, seat: int) -> str:
        carrier = self._carrier(hosted.token, None)
        if clocks.setting.on_timeout == "autopilot":
            try:
                self.matches.seat_bot(carrier, seat, clocks.setting.autopilot_level,
                                      host=partial(self._hosting, change=lambda c, _now: c.on_autopilot(seat)))
                return "autopilot"
            except EngineMalformed:  # the last seat a person plays: no bot may take it, the rule applies
                pass
        self.matches.timeout({**carrier, "seat": seat})
        return "timeout"

    def _back(self, match_id: str, seat: int) -> None:
        """A person whose seat a bot played on autopilot is back (any call with its credential): the seat
        is its own again, with time on its clock."""
        self._with_latest(match_id, None, lambda c: self.matches.seat_bot(
            c, seat, None, host=partial(self._hosting, change=lambda k, now: k.given_back(seat, now))))

    @staticmethod
    def _all_seated(rec: Json) -> bool:
        return all(s["kind"] == "bot" or s["taken"] or s.get("bot") for s in rec["seats"])

    def join(self, table_id: str, body: Json) -> Json:
        self._row(table_id)  # 404 before an assertion is checked
        player = self.archive.player_for(body.get("player")) if self.archive is not None else None
        credential: list[str] = []
        was_bot: list[int] = []

        def change(rec: Json) -> tuple[int, Deal | None]:
            credential.clear()
            was_bot.clear()
            if rec["match_id"] is not None and self._over(rec):
                raise TableRefused("match-over", "this table's match is over (its host may deal another: "
                                                 "POST .../again)")
            seat = self._seat_to_take(rec, body)
            s = rec["seats"][seat]
            if s.get("bot") and rec["match_id"] is not None:
                was_bot.append(seat)
            cred = f"{table_id}.{seat}.{secrets.token_urlsafe(24)}"
            credential.append(cred)
            s.update(taken=True, name=body.get("name") or f"Player {seat + 1}", cred=_hash(cred), invite=None,
                     player=player, bot=None)
            deal = self._deal(rec) if rec["match_id"] is None and self._all_seated(rec) else None
            return seat, deal

        seat, rec = self._update(table_id, change)
        if was_bot:
            self._seat_bot(rec["match_id"], seat, None)
        return {"table_id": table_id, "seat": seat, "credential": credential[0], "player_id": player,
                "match_id": rec["match_id"], "table": self.view(rec)}

    @staticmethod
    def _seat_to_take(rec: Json, body: Json) -> int:
        if body.get("invite") is not None:
            digest = _hash(str(body["invite"]).strip().upper())
            for s in rec["seats"]:
                if s["invite"] is not None and hmac.compare_digest(s["invite"], digest):
                    return int(s["seat"])
            raise TableRefused("invalid-invite", "this invite is not one of this table's, or it was used", "invite")
        if body.get("seat") is None:
            raise TableRefused("malformed", "give an invite, or a seat number on a public table", "invite")
        if not rec["public"]:
            raise TableRefused("invite-required", "this table is private: join with an invite", "seat")
        seat = body["seat"]
        if not 0 <= seat < len(rec["seats"]):
            raise TableRefused("malformed", f"seat: 0..{len(rec['seats']) - 1}", "seat")
        s = rec["seats"][seat]
        if s["kind"] == "open" and not s["taken"]:
            return int(seat)
        if not any(t["kind"] == "open" and not t["taken"] for t in rec["seats"]):
            raise TableRefused("table-full", "every seat of this table is taken", "seat")
        raise TableRefused("seat-taken", f"seat {seat} is taken (or a bot's)", "seat")

    def leave(self, table_id: str, credential: str | None) -> Json:
        bot: list[str] = []

        def change(rec: Json) -> tuple[int, None]:
            bot.clear()
            seat = self._who(rec, credential)
            if seat is None:
                raise TableRefused("not-seated", "the host key holds no seat to leave", "Authorization")
            s = rec["seats"][seat]
            if not s["taken"]:
                raise TableRefused("not-seated", f"seat {seat} is not taken", "Authorization")
            live = rec["match_id"] is not None and not self._over(rec)
            s.update(taken=False, name=None, cred=None, player=None, invite=None,
                     bot=LEAVE_BOT if live and rec["on_leave"] == "bot" else None)
            if s["bot"]:
                bot.append(s["bot"])
            return seat, None

        seat, rec = self._update(table_id, change)
        if bot:
            try:
                self._seat_bot(rec["match_id"], seat, bot[0])
            except EngineMalformed:  # the last person's seat: the engine keeps it a person's, the match waits
                def undo(r: Json) -> tuple[None, None]:
                    r["seats"][seat]["bot"] = None
                    return None, None
                _, rec = self._update(table_id, undo)
        return {"table": self.view(rec)}

    def invites(self, table_id: str, credential: str | None, base_url: str) -> Json:
        def change(rec: Json) -> tuple[list[Json], None]:
            if self._who(rec, credential) is not None:
                raise TableRefused("sealed-forbidden", "only the host key hands out invites", "Authorization")
            made = []
            for s in rec["seats"]:
                if s["kind"] == "open" and not s["taken"]:
                    code = _invite()
                    s["invite"] = _hash(code)
                    made.append(self._invite_answer(table_id, s["seat"], code, base_url))
            return made, None

        made, _ = self._update(table_id, change)
        return {"invites": made}

    def again(self, table_id: str, credential: str | None) -> Json:
        def change(rec: Json) -> tuple[None, Deal | None]:
            self._who(rec, credential)
            if rec["match_id"] is None or not self._over(rec):
                raise TableRefused("match-not-over", "this table's match is still being played (or not dealt yet)")
            rec["match_id"] = None
            return None, self._deal(rec) if self._all_seated(rec) else None

        _, rec = self._update(table_id, change)
        return {"table": self.view(rec)}

    # ------------------------------------------------------------ the seat's match by credentials

    def hosted(self, match_id: str) -> HostedMatch:
        """A live hosted match (404 unknown-match without one)."""
        try:
            found: HostedMatch = self.store.hosted(_match_bytes(match_id))
        except MatchExpired:
            raise UnknownMatch(match_id) from None
        return found

    def context(self, match_id: str, credential: str | None) -> SeatContext:
        hosted = self.hosted(match_id)
        _, rec = self._row(hosted.table_id)
        seat = self._who(rec, credential)
        if seat is not None and hosted.clocks and not hosted.over \
                and seat in orjson.loads(hosted.clocks).get("autopilot", ()):
            self._back(match_id, seat)
            hosted = self.hosted(match_id)
        return SeatContext(match_id, hosted, rec, seat)

    def _carrier(self, token: str, seat: int | None) -> Json:
        sealed = self.matches.keys.open(token)
        return {"token": token, "seat_key": host_key(sealed) if seat is None else seat_key(sealed, seat)}

    def latest(self, ctx: SeatContext) -> Json:
        """`GET /v1/matches/{id}/seat`: the viewer's latest view and a token + key for the sealed calls."""
        viewer = ctx.seat if ctx.seat is not None else ctx.hosted.viewers - 1
        lines, over = self.store.lines(bytes.fromhex(ctx.match_id), viewer, ctx.hosted.seq)
        line = orjson.loads(lines[-1]) if lines else {}
        return {"match_id": ctx.match_id, "table_id": ctx.table["table_id"], "seat": ctx.seat, "seq": ctx.hosted.seq,
                **self._carrier(ctx.hosted.token, ctx.seat), "view": line.get("view"), "scores": line.get("scores"),
                "turn": line.get("turn"), "clocks": line.get("clocks"), "over": over}

    def _with_latest(self, match_id: str, seat: int | None, call: Callable[[Json], bytes],
                     token: str | None = None) -> bytes:
        """`call` with the match's latest token and the seat's key; again with the newer token when
        another seat's change came in between (the store's compare-and-set refused it as stale)."""
        for attempt in range(3):
            if token is None or attempt:
                try:
                    token = self.store.hosted(bytes.fromhex(match_id)).token
                except MatchExpired:
                    raise UnknownMatch(match_id) from None
            try:
                return call(self._carrier(token, seat))
            except StaleToken:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def apply(self, ctx: SeatContext, action: Any) -> bytes:
        if ctx.seat is None:
            raise SealedForbidden("the host key cannot act: use the seat's credential", "Authorization")
        return self._with_latest(ctx.match_id, ctx.seat, lambda c: self.matches.apply({**c, "action": action}),
                                 ctx.hosted.token)

    def legal(self, ctx: SeatContext) -> bytes:
        return self.matches.legal(self._carrier(ctx.hosted.token, ctx.seat))

    def next_round(self, ctx: SeatContext) -> bytes:
        return self._with_latest(ctx.match_id, ctx.seat, self.matches.next_round, ctx.hosted.token)

    def _seat_bot(self, match_id: str, seat: int, level: str | None) -> None:
        """The engine's SeatBot on the latest state: `seat` played by a bot of `level`, or a person (None)."""
        self._with_latest(match_id, None, lambda c: self.matches.seat_bot(c, seat, level))

    # ------------------------------------------------------------ stream tickets

    def ticket(self, ctx: SeatContext) -> Json:
        ticket = secrets.token_urlsafe(24)
        payload = orjson.dumps({"match_id": ctx.match_id, "seat": ctx.seat})
        self.store.put_ticket(hashlib.sha256(ticket.encode()).digest(), payload, TICKET_TTL)
        return {"ticket": ticket, "expires_in": TICKET_TTL}

    def spend_ticket(self, match_id: str, ticket: str) -> int | None:
        """The seat (None: the host) a ticket was given for; `invalid-ticket` when bad, spent or expired."""
        payload = self.store.take_ticket(hashlib.sha256(ticket.encode()).digest()) if len(ticket) < 200 else None
        found = orjson.loads(payload) if payload is not None else None
        if found is None or found["match_id"] != match_id:
            raise TableRefused("invalid-ticket", "this stream ticket is unknown, spent or expired (they last "
                                                 f"{TICKET_TTL} s): ask for a new one", "ticket")
        seat: int | None = found["seat"]
        return seat

    # ------------------------------------------------------------ the end of a match

    def _archive(self, match_id: bytes, state: bytes | None) -> bool:
        """A hosted match is over: archive it with each seat's player (None for a bot's seat) and the
        names the seats were taken under (the record's names: the leaderboard's and a player's name),
        then take it out of the store's `unarchived`. `state`: the final state, or None to open it from
        the stored token. Never raises: the move that ended it is made and answered. True when done;
        False when the engine or a store did not answer, the match left in `unarchived` for
        `archive_due` (the archive's own outbox covers its database)."""
        try:
            if self.archive is not None:
                hosted = self.store.hosted(match_id)
                if state is None:
                    state = self.matches.keys.open(hosted.token).state
                _, rec = self._row(hosted.table_id)
                players = [s.get("player") if s["kind"] == "open" and s["taken"] and not s.get("bot") else None
                           for s in rec["seats"]]
                names = [s["name"] if s["taken"] and s.get("name") else None for s in rec["seats"]]
                record = self.matches.engine.call("ExportRecord", {"view_as": HOST, "names": names,
                                                                   "prior": self.matches.prior_lines(match_id)},
                                                  state).answer
                self.archive.finish(match_id.hex(), players, record)  # a second time: "duplicate", no write
        except (EngineProblem, StoreUnavailable, ArchiveUnavailable) as exc:
            log.warning("hosted match %s: not archived yet, tried again later: %s", match_id.hex(), exc)
            return False
        except MatchExpired:  # the store forgot it: nothing left to archive
            pass
        except TokenError as exc:  # sealed with a key no longer in STATE_TOKEN_KEYS: nobody can open it
            log.error("hosted match %s: not archived, its token cannot be opened: %s", match_id.hex(), exc)
        except Exception:  # a bug (the record refused, say): trying again would only fail again
            log.exception("hosted match %s: not archived", match_id.hex())
        try:
            self.store.archived(match_id)
        except StoreUnavailable:  # left in `unarchived`: archived again later, which the archive answers as a duplicate
            pass
        return True

    def archive_due(self) -> int:
        """Archive the hosted matches whose end no gateway has confirmed archived within `archive_after`
        seconds (the gateway that made the last move failed to: its engine or store did not answer, or it
        stopped in between): what each gateway worker's `ClockKeeper` calls once a second. Exactly once
        across gateways: the archive keys a match by its id. The number archived here."""
        return sum(self._archive(match_id, None) for match_id in self.store.unarchived(self._clock(), 20))


#: The most quick-play tables of one seek key a seek considers (the oldest first).
SEEKABLE = 1000


def _clock_key(clock: Json | None) -> str:
    """A clock setting as the store indexes it (canonical JSON; "" for none)."""
    return "" if clock is None else orjson.dumps(clock, option=orjson.OPT_SORT_KEYS).decode()


def _table_row(rec: Json, version: int) -> TableRow:
    """A table's record as the store keeps and indexes it (`TableRow`)."""
    free = sum(1 for s in rec["seats"] if s["kind"] == "open" and not s["taken"])
    seek = rec.get("seek")
    return TableRow(rec["table_id"], version, orjson.dumps(rec), rec["public"], rec["variant"], free, rec["created"],
                    rec["players"], _clock_key(rec.get("clock")), seek is not None,
                    seek.get("fill_at") if seek is not None and rec["match_id"] is None else None)


def _check_clock_without_rule(variant: str, clock: Json, people: int) -> None:
    """A clock on a variant with no timeout rule (`timeout_rule` false: all but Kozel and Kingdomino) can
    only hand the seat to a bot, and never the last person's seat: refuse the settings under which it
    could never be applied (TableRefused, 400), rather than a clock that runs out and does nothing."""
    if clock["on_timeout"] == "rule":
        raise TableRefused("malformed", f"clock.on_timeout: {variant} has no timeout rule (Kozel's and Kingdomino's "
                           "end a match when a clock runs out): use \"autopilot\"", "clock.on_timeout")
    if people < 2:
        raise TableRefused("malformed", f"clock: {variant} has no timeout rule and the autopilot never takes the "
                           "last person's seat, so a clock needs at least two seats for people", "clock")


def _clocked(hosted: Hosted, clocks: Clocks, now: float) -> Hosted:
    """`hosted` with its turn clocks: kept (and their deadline indexed) in the same write, and shown in
    every viewer's line as ``clocks`` (each seat's time left then, the running one's deadline)."""
    shown = b',"clocks":' + orjson.dumps(clocks.to_json(now)) + b"}"
    return Hosted(hosted.token, [line[:-1] + shown for line in hosted.lines], orjson.dumps(clocks.dump()),
                  clocks.deadline)


class ClockKeeper:
    """One gateway worker's loop that applies turn clocks that ran out, with nobody calling
    (`Tables.expire_due`, every `period` seconds), fills quick-play tables whose wait for people
    is over with bots (`Tables.fill_due`, every fifth pass), and archives the matches that ended
    without their gateway archiving them (`Tables.archive_due`, every fifth pass)."""

    def __init__(self, tables: Tables, period: float = 0.2) -> None:
        self.tables = tables
        self.period = period
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            # every outcome's series exists (at 0) from the worker's start, so the dashboard's clock panel
            # has data before the first clock runs out (made here, in the worker, not at import)
            for outcome in ("timeout", "autopilot", "lost", "failed"):
                metrics.CLOCK_TIMEOUTS.labels(outcome)
            self._thread = threading.Thread(target=self._run, name="clock-keeper", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        passes = 0
        while not self._stop.wait(self.period):
            passes += 1
            try:
                self.tables.expire_due()
                if passes % 5 == 0:
                    self.tables.fill_due()
                    self.tables.archive_due()
            except StoreUnavailable as exc:  # the store is back soon: the clocks are still due then
                log.warning("turn clocks not checked: %s", exc)
            except Exception:  # a bug must not stop every table's clocks
                log.exception("turn clocks: the keeper's pass failed")

    def stop(self) -> None:
        self._stop.set()
