"""A hosted tournament's state (JSON, kept by `api_gateway.archive.hosted`) and the pure rules about it: no
store, no engine, no database. `api_gateway.hosting.tournament_host` reads and writes states through these.

A state holds the tournament's settings, its people in the tournament's order (each with the SHA-256 of their
tournament credential: never one that works), the unused invites (hashed), the engine's tournament state
(RULES.md B: who plays, limits, eliminations, standings; the engine decides all of it), the round being
played (its table, match and seats: the seats' credentials sealed with the gateway's state keys, so the
database alone opens no seat) and the rounds played.

Credentials: ``<tournament id>.p.<secret>`` for a participant, ``<tournament id>.host.<secret>`` for the host.
"""
from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from api_gateway.archive.hosted import OPEN, OVER, PLAYING
from api_gateway.hosting import tournament_swiss as swiss_rules
from api_gateway.hosting.records import display_name, new_invite, secret_hash
from api_gateway.hosting.tournament_swiss import EXITS
from api_gateway.http.problems import TableRefused
from api_gateway.tokens import HOST

Json = dict[str, Any]
#: The formats a hosted tournament may have.
BYKOVO, SWISS = "bykovo", "swiss"
#: People in a Bykovo micro-tournament (RULES.md B), and at each round's table.
SMALLEST, LARGEST, SEATS = 4, 7, 4
#: Places of a Swiss.
SWISS_SMALLEST, SWISS_LARGEST = 2, 64
PERSON = "p"


def new_state(tournament_id: str, body: Json, host: str, now: float) -> tuple[Json, list[str]]:
    """A new tournament's state and its invite codes (one per place), from an open request (the variant and
    options are the engine's to check: `HostedTournaments.open`)."""
    fmt = body.get("format") or BYKOVO
    size, rounds = body["size"], body.get("rounds")
    if fmt == BYKOVO:
        variant = body.get("variant") or BYKOVO
        if variant != BYKOVO:
            raise TableRefused("malformed", f"variant: a Bykovo micro-tournament plays bykovo, not {variant!r}",
                               "variant")
        if not SMALLEST <= size <= LARGEST:
            raise TableRefused("malformed", f"size: a Bykovo micro-tournament has {SMALLEST} to {LARGEST} people "
                                            f"(RULES.md B), not {size}", "size")
        if rounds is not None:
            raise TableRefused("malformed", "rounds: a Bykovo micro-tournament plays until 3 or fewer remain",
                               "rounds")
        if body.get("players") not in (None, SEATS):
            raise TableRefused("malformed", "players: a Bykovo micro-tournament seats four at each round", "players")
        seats = SEATS
    elif fmt == SWISS:
        variant = body.get("variant")
        seats = body.get("players") or swiss_rules.SEATS
        if not variant:
            raise TableRefused("malformed", "variant: name the variant every match of the Swiss plays", "variant")
        if seats not in swiss_rules.TABLE_SIZES:
            raise TableRefused("malformed", f"players: a Swiss seats tables of 2 or 4, not {seats}", "players")
        if not max(SWISS_SMALLEST, seats) <= size <= SWISS_LARGEST:
            raise TableRefused("malformed", f"size: a Swiss at tables of {seats} has {max(SWISS_SMALLEST, seats)} "
                                            f"to {SWISS_LARGEST} places", "size")
        if rounds is None:
            raise TableRefused("malformed", "rounds: a Swiss plays a set number of rounds (1-20)", "rounds")
    else:
        raise TableRefused("malformed", f"format: {fmt!r} is not hosted (bykovo, swiss)", "format")
    codes = [new_invite() for _ in range(size)]
    state: Json = {"tournament_id": tournament_id, "format": fmt, "variant": variant, "size": size,
                   "options": body.get("options") or {}, "seats": seats,
                   "name": display_name(body.get("name"), "") or None, "public": bool(body.get("public", False)),
                   "rated": bool(body.get("rated", True)), "clock": body.get("clock"),
                   "created": now, "host": secret_hash(host), "status": OPEN, "archived": False,
                   "people": [], "invites": [secret_hash(c) for c in codes],
                   "engine": None, "swiss": None if fmt == BYKOVO else {"rounds": rounds, "seats": seats},
                   "round": None, "rounds": []}
    return state, codes


def credential_parts(credential: str | None) -> tuple[str, str]:
    """The tournament id and the kind (`PERSON` or `HOST`) a credential names (401 when it names none)."""
    if not credential or not credential.isascii():
        raise TableRefused("invalid-credential", "send your tournament credential (or the host key) as "
                                                 "Authorization: Bearer <value>", "Authorization")
    tournament_id, _, rest = credential.partition(".")
    kind, _, _ = rest.partition(".")
    return tournament_id, kind


def who(state: Json, credential: str | None) -> int | None:
    """The participant a credential is (their index in the tournament's order), None for the host key; 401
    invalid-credential for anything else (403 wrong-table for one shaped as another tournament's)."""
    tournament_id, kind = credential_parts(credential)
    assert credential is not None
    if tournament_id != state["tournament_id"]:
        if len(tournament_id) == len(state["tournament_id"]) and kind in (PERSON, HOST):
            raise TableRefused("wrong-table", "this credential is another tournament's", "Authorization")
        raise TableRefused("invalid-credential", "not a credential of this service", "Authorization")
    digest = secret_hash(credential)
    if kind == HOST and hmac.compare_digest(state["host"], digest):
        return None
    for i, person in enumerate(state["people"]):
        if kind == PERSON and hmac.compare_digest(person["cred"], digest):
            return i
    raise TableRefused("invalid-credential", "not a credential of this tournament", "Authorization")


def take_invite(state: Json, body: Json) -> None:
    """Spend the join's invite (a private tournament needs one; a public one takes anyone while places last)."""
    if len(state["people"]) >= state["size"]:
        raise TableRefused("tournament-full", f"all {state['size']} places of this tournament are taken")
    code = body.get("invite")
    if code is None:
        if not state["public"]:
            raise TableRefused("invite-required", "this tournament is private: join with an invite", "invite")
        return
    digest = secret_hash(str(code).strip().upper())
    for i, kept in enumerate(state["invites"]):
        if hmac.compare_digest(kept, digest):
            del state["invites"][i]
            return
    raise TableRefused("invalid-invite", "this invite is not one of this tournament's, or it was used", "invite")


def add_person(state: Json, name: object, player: str, app: str | None = None) -> str:
    """A new participant at the end of the order; their credential (answered once). `app`: the key id of the host
    app that vouched for them (its webhooks are told of their rounds)."""
    if state["status"] != OPEN:
        raise TableRefused("tournament-started", f"this tournament is {state['status']}: nobody joins it any more")
    if any(p["player"] == player for p in state["people"]):
        raise TableRefused("seat-held", f"{player} is in this tournament already (one person, one place)", "player")
    credential = f"{state['tournament_id']}.{PERSON}.{secrets.token_urlsafe(24)}"
    taken = {p["name"] for p in state["people"]}
    shown = display_name(name, f"Player {len(state['people']) + 1}")
    unique, n = shown, 2
    while unique in taken:  # the engine names participants: each name once
        unique, n = f"{shown} ({n})", n + 1
    state["people"].append({"name": unique, "player": player, "cred": secret_hash(credential), "left": False,
                            "app": app if player.startswith("app:") else None})
    return credential


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a round's match went: its round's `points` (seat order) and winning seat, or the seat that
    `forfeit`ed it (an exit that ended the match before its round was over)."""

    points: list[int] | None = None
    winner: int | None = None
    forfeit: int | None = None


def round_outcome(lines: list[bytes]) -> Outcome | None:
    """How a round's match went, from its public lines: its first round's end, or the exit that ended it
    first; None while it is played."""
    for line in lines:
        for event in orjson.loads(line).get("events") or ():
            if event.get("type") == "round_ended":
                record = event["record"]
                return Outcome(points=[int(p) for p in record["round_points"]], winner=int(record["winner"]))
            if event.get("type") in EXITS and isinstance(event.get("seat"), int):
                return Outcome(forfeit=int(event["seat"]))
    return None


def forfeit_points(engine_state: Json, players: list[int], seat: int) -> tuple[list[int], int]:
    """A round a seat forfeited (RULES.md B has no forfeit; *decision*, docs/tournaments.md): its person scores
    what takes their total to the limit (they are out), the three others 0, and the round is won by the one of
    them with the lowest total before it (equal totals: the earlier in the tournament's order)."""
    totals, limit = engine_state["totals"], engine_state["limit"]
    points = [0] * len(players)
    points[seat] = max(1, limit - totals[players[seat]])
    winner = min((s for s in range(len(players)) if s != seat), key=lambda s: (totals[players[s]], players[s]))
    return points, winner


def round_tables(rnd: Json) -> list[Json]:
    """A round's tables ({table_id, match_id, players, seats}): a Swiss round's several, a Bykovo round's one
    (the round itself)."""
    tables: list[Json] = rnd["tables"] if "tables" in rnd else [rnd]
    return tables


def round_byes(rnd: Json) -> list[int] | None:
    """A Swiss round's byes (a 2-player Swiss's rounds written before `byes` hold their `bye`); Bykovo: None."""
    if "tables" not in rnd:
        return None
    byes: list[int] = rnd.get("byes", [] if rnd.get("bye") is None else [rnd["bye"]])
    return byes


def gone(state: Json) -> set[int]:
    """The participants who play no more: eliminated (Bykovo), or who left (Swiss: no more pairings)."""
    if state["format"] == SWISS:
        return {i for i, p in enumerate(state["people"]) if p["left"]}
    return {p for r in (state["engine"] or {}).get("rounds", ()) for p in r.get("eliminated", ())}


def view(state: Json, version: int) -> Json:
    """The tournament as anyone holding its id sees it: no hash, no seat credential."""
    engine = state["engine"] or {}
    out = gone(state)
    rnd = state["round"]
    tables = round_tables(rnd) if rnd is not None else []
    playing = [p for t in tables for p in t["players"]]
    people = [{"index": i, "name": p["name"], "player": p["player"], "out": i in out, "left": p["left"]}
              for i, p in enumerate(state["people"])]
    swiss = state.get("swiss")
    if swiss is not None and "points" in swiss:
        standings = swiss_rules.standings(swiss, [p["name"] for p in state["people"]], state["status"] == OVER)
    else:
        standings = engine.get("standings") or []
    return {"tournament_id": state["tournament_id"], "name": state["name"], "format": state["format"],
            "variant": state["variant"], "options": state.get("options") or {}, "size": state["size"],
            "public": state["public"], "rated": state["rated"], "clock": state["clock"], "status": state["status"],
            "archived": state["archived"], "version": version, "created": int(state["created"]),
            "rounds_to_play": None if swiss is None else swiss["rounds"], "players": state["seats"],
            "participants": people, "limit": engine.get("limit"), "first_sitters": engine.get("first_sitters"),
            "round": None if rnd is None else {
                "number": rnd["number"], "table_id": rnd.get("table_id"), "match_id": rnd.get("match_id"),
                "players": playing, "bye": rnd.get("bye"), "byes": round_byes(rnd),
                "tables": [{"table_id": t["table_id"], "match_id": t.get("match_id"), "players": t["players"]}
                           for t in tables],
                "sitting_out": [i for i in range(len(people)) if i not in playing and i not in out]},
            "rounds": [r | {"byes": round_byes(r)} if "tables" in r else r for r in state["rounds"]],
            "standings": standings,
            "next_players": engine.get("next_players") if state["status"] == PLAYING and rnd is None else None}


def you(state: Json, index: int, open_seats: Callable[[str], list[str]]) -> Json:
    """What a participant's credential adds to the view: where they play now (their seat's credential, from the
    round's sealed seats: `open_seats`), or that they sit out (a Swiss bye too), are out, or wait for the next
    round."""
    rnd = state["round"]
    found: Json = {"index": index, "name": state["people"][index]["name"],
                   "player": state["people"][index]["player"], "left": state["people"][index]["left"],
                   "status": "waiting", "round": None if rnd is None else rnd["number"], "table_id": None,
                   "match_id": None, "seat": None, "credential": None}
    if state["status"] == OVER:
        found["status"] = "over"
        return found
    if index in gone(state):
        found["status"] = "out"
        return found
    if rnd is None:
        return found
    for table in round_tables(rnd):
        if index in table["players"]:
            if table.get("match_id"):
                seat = table["players"].index(index)
                found.update(status="playing", table_id=table["table_id"], match_id=table["match_id"], seat=seat,
                             credential=open_seats(table["seats"])[seat])
            return found
    found["status"] = "sitting-out"
    return found
