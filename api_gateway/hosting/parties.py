"""Seeking as a pair (issue 41; docs/tables.md "Seeking as a pair"): the pure rules of a quick-play table's
partners. No store, no engine: `api_gateway.hosting.matchmaking` reads and writes records through these.

Partners sit opposite (seats 0+2 against 1+3: the engine's `teams` option, which only 4-player matches of
the variants with partnerships take). A seek as a **party** takes a seat and keeps the one opposite for
its partner: that seat's invite is the party's secret, and the table's `seek` member lists the kept seats
(`parties`: the seat and the secret's SHA-256), so the code still says which party it was once spent
(`party-full`, not `unknown-party`). A party's table is private: nobody takes the kept seat by its
number from the lobby, and seekers are seated at it by invites that matchmaking makes one at a time.
A seek with a **bot partner** takes a seat and makes the one opposite a bot's.

A party's code is ``<table id>.<secret>``: the table is found from the code alone, however full it is.
"""
from __future__ import annotations

import hmac
from typing import Any

from api_gateway.hosting import records
from api_gateway.http.problems import TableRefused

Json = dict[str, Any]
#: The engine's option that makes partners of opposite seats.
TEAMS = "teams"
#: A pair's matches: two against two.
PLAYERS = 4
#: The refusal of a party's code whose seat is taken.
FULL = ("this party's partner seat is taken (by its partner, or by a bot once the table's wait for people "
        "ended): a party's code seats one partner, once")


def has_partnerships(variant: Json) -> bool:
    """Whether a variant (as `GET /v1/variants` describes it) plays partners: it takes the `teams` option."""
    return any(o.get("name") == TEAMS for o in variant.get("options") or ())


def opposite(seat: int) -> int:
    """The partner's seat of `seat` at a table of `PLAYERS`."""
    return (seat + PLAYERS // 2) % PLAYERS


def parties(rec: Json) -> list[Json]:
    """The seats kept for partners at a quick-play table, each `{"seat", "code"}` (code: the secret's hash)."""
    found: list[Json] = (rec.get("seek") or {}).get("parties") or []
    return found


def waits_for_partner(rec: Json, party: Json) -> bool:
    """Whether a party's kept seat is still free for its partner (not taken, not a bot's, its invite the
    party's)."""
    s = rec["seats"][party["seat"]]
    return s["kind"] == "open" and not s["taken"] and s["invite"] is not None \
        and hmac.compare_digest(s["invite"], party["code"])


def kept(rec: Json) -> set[int]:
    """The seats kept for a partner who has not come yet: no other seeker takes them."""
    return {int(p["seat"]) for p in parties(rec) if waits_for_partner(rec, p)}


def fits(rec: Json, seat: int, pair: str | None) -> bool:
    """Whether a seeker may take `seat` of a waiting quick-play table. Alone: a free seat not kept for a
    partner. A pair: such a seat whose opposite is one too, at a table that plays partners and is not dealt
    yet; a party (whose partner's seat must be kept from the lobby) at a party's private table only."""
    free = {s["seat"] for s in rec["seats"] if s["kind"] == "open" and not s["taken"]} - kept(rec)
    if pair is None:
        return seat in free
    return rec["match_id"] is None and rec["players"] == PLAYERS and rec["options"].get(TEAMS) is True \
        and not (pair == "party" and rec["public"]) and seat in free and opposite(seat) in free


def seat_for(rec: Json, pair: str | None) -> int | None:
    """The seat a seeker takes at a waiting quick-play table, the first that `fits` (None: none)."""
    return next((s["seat"] for s in rec["seats"] if fits(rec, s["seat"], pair)), None)


def claim(rec: Json, seat: int, pair: str | None, code: str, secret: str | None, level: str) -> None:
    """Give `seat` the seeker's invite `code`, and for a pair keep the seat opposite for the partner whose
    invite is `secret` ("party") or make it a bot's of `level` ("bot"). A seat that no longer `fits` is
    refused (`seat-taken`: the seeker tries the next table)."""
    if not fits(rec, seat, pair):
        raise TableRefused("seat-taken", f"seat {seat} was taken meanwhile", "seat")
    rec["seats"][seat]["invite"] = records.secret_hash(code)
    partner = rec["seats"][opposite(seat)]
    if pair == "bot":
        partner.update(kind="bot", level=level, invite=None)
    elif pair == "party" and secret is not None:
        partner["invite"] = records.secret_hash(secret)
        rec["seek"]["parties"] = [*parties(rec), {"seat": opposite(seat), "code": partner["invite"]}]


def unclaim(rec: Json, seat: int, pair: str) -> None:
    """Undo `claim`'s seat opposite when the seeker could not be seated after all (a person seated twice)."""
    partner = rec["seats"][opposite(seat)]
    if pair == "bot" and partner["kind"] == "bot" and rec["match_id"] is None:
        partner.update(kind="open", level=None, invite=None)
    elif pair == "party":
        rec["seek"]["parties"] = [p for p in parties(rec) if p["seat"] != opposite(seat)]
        if not partner["taken"]:
            partner["invite"] = None


def party_code(table_id: str, secret: str | None) -> str | None:
    """The code a party's maker gives its partner (None: no party)."""
    return None if secret is None else f"{table_id}.{secret}"


def parse_code(code: str) -> tuple[str, str]:
    """`(table id, secret)` of a party's code ("" for a part it lacks)."""
    table_id, _, secret = code.strip().partition(".")
    return (table_id, secret.strip().upper()) if 0 < len(table_id) <= 64 and secret.strip() else ("", "")


def party_of(rec: Json, secret: str) -> Json | None:
    """The party of the table whose code has this secret (None: none)."""
    digest = records.secret_hash(secret)
    return next((p for p in parties(rec) if hmac.compare_digest(p["code"], digest)), None)


def key(variant: str, players: int, clock: Json | None, rated: bool) -> str:
    """A seek's key as a person reads it: a party's partner must seek what its maker sought."""
    timed = "no clock" if clock is None else f"clock {records.clock_key(clock)}"
    return f"{variant} for {players}, {timed}, {'rated' if rated else 'casual'}"
