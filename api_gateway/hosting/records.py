"""An online table's record (JSON, kept in the live store as `store.TableRow`): what it holds and the pure
rules about it. No store, no engine: `api_gateway.hosting.tables` reads and writes records through these.

A record holds the table's variant, seats (open for a person, or a bot with its level), invites and
credentials (hashed: the store never holds one that works), the current match, and a quick-play
table's seek (its opener's skill, when its wait for people ends).

Credentials: ``<table id>.<seat>.<secret>`` for a seat, ``<table id>.host.<secret>`` for the host key;
only their SHA-256 is kept. Invites: 8 characters, one per open seat not taken, single use.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

import orjson

from api_gateway.archive.assertions import PREFIX_APP
from api_gateway.http.problems import TableRefused
from api_gateway.store import TableRow
from api_gateway.tokens import HOST

Json = dict[str, Any]
INVITE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud or typed from a screen
INVITE_CHARS = 8


def secret_hash(secret: str) -> str:
    """What a record keeps of a credential, an invite or a ticket: its SHA-256."""
    return hashlib.sha256(secret.encode()).hexdigest()


def new_invite() -> str:
    return "".join(secrets.choice(INVITE_ALPHABET) for _ in range(INVITE_CHARS))


def invite_answer(table_id: str, seat: int, code: str, base_url: str) -> Json:
    return {"seat": seat, "code": code, "link": f"{base_url.rstrip('/')}/play?table={table_id}&invite={code}"}


def clock_key(clock: Json | None) -> str:
    """A clock setting as the store indexes it (canonical JSON; "" for none)."""
    return "" if clock is None else orjson.dumps(clock, option=orjson.OPT_SORT_KEYS).decode()


def free_seats(rec: Json) -> int:
    return sum(1 for s in rec["seats"] if s["kind"] == "open" and not s["taken"])


def table_row(rec: Json, version: int) -> TableRow:
    """A record as the store keeps and indexes it: the lobby, quick play's key, the filler's time, and the
    inboxes of its vouched players (`vouched`)."""
    seek = rec.get("seek")
    fill_at = seek.get("fill_at") if seek is not None and rec["match_id"] is None else None
    return TableRow(rec["table_id"], version, orjson.dumps(rec), rec["public"], rec["variant"], free_seats(rec),
                    rec["created"], rec["players"], clock_key(rec.get("clock")), seek is not None, fill_at,
                    vouched(rec))


def vouched(rec: Json) -> tuple[str, ...]:
    """The players the host app vouched for (``app:...``) who hold a seat: the inboxes that list the table. A
    guest's id is new at each join and proven by nothing but the seat's credential, so no inbox is kept for
    it (a guest lists its games by its credentials)."""
    return tuple(sorted({s["player"] for s in rec["seats"]
                         if s["taken"] and isinstance(s.get("player"), str) and s["player"].startswith(PREFIX_APP)}))


def seat_of(rec: Json, player: str | None) -> int | None:
    """The seat a player holds at this table (None: none, or no player: a guest is a new player each time)."""
    if player is None:
        return None
    return next((int(s["seat"]) for s in rec["seats"] if s["taken"] and s.get("player") == player), None)


def all_seated(rec: Json) -> bool:
    return all(s["kind"] == "bot" or s["taken"] or s.get("bot") for s in rec["seats"])


def persons(rec: Json) -> list[int]:
    """The seats a person plays now (taken, and no bot playing it since its person left)."""
    return [int(s["seat"]) for s in rec["seats"] if s["kind"] == "open" and s["taken"] and not s.get("bot")]


#: Seconds a seat must be gone before the others may claim victory, unless the table says.
CLAIM_AFTER = 120


def claim_after(rec: Json) -> int:
    """The table's claim time: as it was opened with, else `CLAIM_AFTER`, or its clock's longest wait for one
    move if longer (a correspondence table's seat is not gone while its clock lets it think)."""
    if rec.get("claim_after") is not None:
        return int(rec["claim_after"])
    clock = rec.get("clock") or {}
    return int(max(CLAIM_AFTER, clock.get("move") or 0, clock.get("bank") or 0))


#: The events of a seat's own action (domino: `seat`; Kingdomino: `player`).
ACTIONS = frozenset({"played", "drew", "passed", "tile_placed", "tile_picked", "tile_discarded"})


def moved(lines: list[bytes]) -> set[int]:
    """The seats that made a move in a match, from its public lines (the table's public stream)."""
    seats: set[int] = set()
    for line in lines:
        for e in orjson.loads(line).get("events") or ():
            if e.get("type") in ACTIONS:
                who = e.get("seat", e.get("player"))
                if isinstance(who, int):
                    seats.add(who)
    return seats


def view(rec: Json, over: bool, presence: dict[int, Json] | None = None) -> Json:
    """The table as anyone holding its id sees it (no hash; each taken seat's player id, public as on
    the leaderboard, so a client can show the player's rating beside the name; `presence`: whether each
    person's seat is here, `hosting.presence.seat_presence`)."""
    seats = []
    waiting = False
    for s in rec["seats"]:
        bot = s["level"] if s["kind"] == "bot" else s.get("bot")
        if s["kind"] == "open" and not s["taken"] and not (bot and rec["match_id"]):
            waiting = True
        shown = (presence or {}).get(s["seat"], {})
        seats.append({"seat": s["seat"], "kind": s["kind"], "level": bot,
                      "taken": s["kind"] == "bot" or s["taken"],
                      "name": s["name"] if s["taken"] else (f"{bot} bot" if bot else None),
                      "player": s.get("player") if s["kind"] == "open" and s["taken"] else None,
                      "here": shown.get("here"), "away_since": shown.get("away_since")})
    status = "over" if over else "waiting" if waiting or rec["match_id"] is None else "playing"
    return {"table_id": rec["table_id"], "name": rec["name"], "variant": rec["variant"],
            "players": rec["players"], "options": rec["options"], "public": rec["public"],
            "rated": rec.get("rated", True), "spectators": bool(rec.get("spectators")),
            "claim_after": claim_after(rec),
            "on_leave": rec["on_leave"], "clock": rec.get("clock"), "seats": seats, "status": status,
            "match_id": rec["match_id"], "matches": rec["matches"], "created": int(rec["created"])}


def holds(rec: Json, credential: str, who: str) -> bool:
    """Whether `credential` is this table's host key (`who` "host") or the credential of seat `who`."""
    digest = secret_hash(credential)
    if who == HOST:
        return hmac.compare_digest(rec["host"], digest)
    if not (who.isascii() and who.isdigit()) or int(who) >= len(rec["seats"]):
        return False
    stored = rec["seats"][int(who)].get("cred")
    return stored is not None and hmac.compare_digest(stored, digest)


def holds_watch(rec: Json, code: str) -> bool:
    """Whether `code` is this private table's spectator code."""
    stored = rec.get("watch")
    return stored is not None and hmac.compare_digest(stored, secret_hash(code.strip().upper()))


def seat_to_take(rec: Json, body: Json) -> int:
    """The seat a join takes: its invite's, or on a public table the seat asked for; refusals as the spec says."""
    if body.get("invite") is not None:
        digest = secret_hash(str(body["invite"]).strip().upper())
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
    if free_seats(rec) == 0:
        raise TableRefused("table-full", "every seat of this table is taken", "seat")
    raise TableRefused("seat-taken", f"seat {seat} is taken (or a bot's)", "seat")


#: What a display name may not hold: control characters (NUL, newlines, ...) and the bidirectional
#: controls that reorder what follows them (a right-to-left override makes "alice" of "ecila").
_UNSHOWN = {chr(c) for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F,
                             *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0xFEFF)}
NAME_CHARS = 40


def display_name(name: object, fallback: str) -> str:
    """A seat's name as the table shows it: the controls and bidirectional marks removed, runs of spaces
    made one, at most `NAME_CHARS` characters; `fallback` when nothing is left."""
    if not isinstance(name, str):
        return fallback
    shown = " ".join("".join(" " if c in _UNSHOWN else c for c in name).split())[:NAME_CHARS].strip()
    return shown or fallback


def check_clock_without_rule(variant: str, clock: Json, people: int) -> None:
    """A clock on a variant with no timeout rule (`timeout_rule` false: all but Kozel and Kingdomino) can
    only hand the seat to a bot, and never the last person's seat: refuse the settings under which it
    could never be applied (TableRefused, 400), rather than a clock that runs out and does nothing."""
    if clock["on_timeout"] == "rule":
        raise TableRefused("malformed", f"clock.on_timeout: {variant} has no timeout rule (Kozel's and Kingdomino's "
                           "end a match when a clock runs out): use \"autopilot\"", "clock.on_timeout")
    if people < 2:
        raise TableRefused("malformed", f"clock: {variant} has no timeout rule and the autopilot never takes the "
                           "last person's seat, so a clock needs at least two seats for people", "clock")
