"""RFC 9457 problem details: every error the gateway answers, mapped from exceptions in one place.

`PROBLEM_TYPES` is the catalogue, written once: each type's stable name, status, title,
description, extension members and whether it says when to try again (Retry-After). Its
`type` member is the relative URI ``/v1/problems/<name>``, which serves the type's
description. Plain HTTP errors (404, 405, 413, 415) use ``about:blank`` with the status
phrase as the title, as RFC 9457 asks; the ones an operation documents are `PLAIN_TYPES`.

Everything else reads the catalogue: `from_exception` (the one mapping from what the
gateway raises to what the client sees), the OpenAPI document's problem answers of each
operation (`api_gateway.http.openapi.operation`), `GET /v1/problems/{name}`, and docs/rest.md's
table of errors (`markdown_table`, which tests/gateway/test_gateway_errors.py holds the page to).
"""
from __future__ import annotations

import difflib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from flask import Flask, Response, current_app, json, request
from werkzeug.exceptions import HTTPException

from api_gateway.archive.cursor import BadCursor
from api_gateway.archive.database import ArchiveUnavailable
from api_gateway.archive.players import PlayerIdError
from api_gateway.archive.repository import NotArchived, UnknownPlayer
from api_gateway.engine import (
    EngineBusy,
    EngineDeadline,
    EngineFailed,
    EngineIllegal,
    EngineMalformed,
    EngineMisdeal,
    EngineTooLarge,
    EngineUnavailable,
)
from api_gateway.store import MatchExpired, StaleToken, StoreUnavailable
from api_gateway.tokens import SeatKeyError, TokenError

log = logging.getLogger("api_gateway.http.problems")

MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "/v1/problems/"
MAX_DETAIL = 1000


@dataclass(frozen=True, slots=True)
class ProblemType:
    """One kind of error answer: `members` are its extension members (beyond type, title, status,
    detail, instance), `retry_after` whether it carries a Retry-After header (try again later)."""

    name: str
    status: int
    title: str
    description: str
    members: tuple[str, ...] = ()
    retry_after: bool = False


PROBLEM_TYPES: dict[str, ProblemType] = {t.name: t for t in (
    ProblemType("validation-error", 422, "The request does not match its schema",
                "A field is missing, unknown, of the wrong type or out of range (no coercion: \"4\" is not 4, "
                "1 is not true); a carried `state` is only checked to be an object here, its insides are the "
                "engine's (400 malformed). `errors` lists the messages by field; `field` names the first.",
                ("field", "errors")),
    ProblemType("malformed-json", 400, "The request body is not JSON",
                "Send a JSON object with Content-Type: application/json."),
    ProblemType("malformed", 400, "The engine cannot understand the request",
                "Bad notation, an unknown variant or option, or a state that is not consistent. "
                "`field` names the offending field when the engine names one; `action` echoes the action.",
                ("field", "action")),
    ProblemType("illegal-action", 409, "Not allowed in this state",
                "Well formed, but the rules forbid it now: not this seat's turn, a tile it does not hold, "
                "a tile that does not fit, the round, the match or the tournament is over. The state is unchanged.",
                ("action",)),
    ProblemType("misdeal", 409, "The deal is a misdeal",
                "The variant's misdeal rule refuses this explicit deal: deal again.", ("action",)),
    ProblemType("unknown-variant", 404, "No such variant",
                "GET /v1/variants lists the variants; `detail` offers the closest name.", ("field",)),
    ProblemType("unknown-match", 404, "No such live sealed match",
                "The spectator stream follows a live sealed match by the `match_id` of its answers; this "
                "one was never created here, or has been idle longer than the service keeps matches.", ("field",)),
    ProblemType("invalid-token", 400, "The state token cannot be opened",
                "The token was altered or truncated, was not issued by this service, or was sealed with a "
                "key that has been retired. Nothing was done.", ("field",)),
    ProblemType("stale-token", 409, "The token is not the latest of its match",
                "Every call that changes a sealed match makes a new token and retires the one it was "
                "given; only the latest token of a match is accepted (`latest` is its version, `seq` of "
                "the latest answer). An old token, or the loser of two calls made at once with the same "
                "token, is refused and nothing is done with it. Use the token of your latest answer.",
                ("field", "latest")),
    ProblemType("match-expired", 410, "The sealed match has expired",
                "The service keeps the version of a sealed match while it is played; after the idle time "
                "the operator set (GATEWAY_MATCH_TTL, a day by default) its tokens are refused. Start a new match.",
                ("field",)),
    ProblemType("store-unavailable", 503, "The token version store is unavailable",
                "Sealed calls need the store that says which token of a match is the latest, and it did "
                "not answer; no token is accepted unchecked. Try again after Retry-After seconds, with the same "
                "request (docs/rest.md, \"A 503 means try again\").", retry_after=True),
    ProblemType("wrong-seat-key", 403, "The seat key does not belong to this match",
                "Use the key handed out for your seat when the match was created.", ("field",)),
    ProblemType("sealed-forbidden", 403, "Not allowed to this caller in sealed mode",
                "A seat acts only for itself and sees only its own view; some calls (settling from "
                "declared hands, explicit deals) are for transparent mode only.", ("field",)),
    ProblemType("sealed-mode-disabled", 501, "Sealed mode is not configured",
                "The operator has not configured STATE_TOKEN_KEYS."),
    ProblemType("engine-busy", 429, "The rules engine's bots are busy",
                "Expert suggestions and hints share a few bot slots per engine with the computer players of "
                "matches being played, which go first; all were thinking. Nothing was done: try again after "
                "Retry-After seconds.", retry_after=True),
    ProblemType("too-many-streams", 429, "Too many spectator streams",
                "Each gateway worker holds a bounded number of spectator streams: in all (the rest of its "
                "connections serve ordinary calls), of one match, and of one client address (`limit` names "
                "which was reached); an online table's event streams likewise, and of one seat (`limit` "
                "\"seat\"). Close a stream you no longer read, or try again after Retry-After seconds.",
                ("limit",), retry_after=True),
    ProblemType("too-large", 413, "The match is too large for one call",
                "The request, or the answer it asks for (a long match's record, say), is over the size the "
                "service carries in one message (`what`, `size` and `limit` in bytes). Asking again gives the "
                "same answer: ask for less (a shorter replay, another record view) or start a new match.",
                ("what", "size", "limit")),
    ProblemType("engine-unavailable", 503, "The rules engine is unavailable",
                "No engine answered (after retries). Try again after Retry-After seconds.", retry_after=True),
    ProblemType("engine-timeout", 504, "The rules engine did not answer in time",
                "The engine call exceeded the gateway's deadline."),
    ProblemType("engine-error", 502, "The rules engine failed",
                "The engine answered with an unexpected error."),
    ProblemType("unknown-player", 404, "No such player",
                "The archive knows a player once a match of theirs has ended: this id has none (or is not "
                "a player id: app:<user> or guest:<22 characters>).", ("field",)),
    ProblemType("not-archived", 404, "No such archived match",
                "The archive keeps a match once it is over; this id names none (not over yet, or never "
                "played here).", ("field",)),
    ProblemType("bad-cursor", 400, "The page cursor is not one of this list's",
                "Pass the `next` of the previous page of the same list (same player, variant and order) "
                "as it came; omit `cursor` for the first page.", ("field",)),
    ProblemType("invalid-player", 400, "The player assertion does not check",
                "A player id vouched for by the host app is an assertion, a JWT its server signs with a key the "
                "operator configured (docs/security.md, \"Player assertions\"): this one is garbled, expired, "
                "signed with another key, or the service holds no host app key.", ("field",)),
    ProblemType("archive-unavailable", 503, "The archive database is unavailable",
                "Players, ratings and finished matches are kept in a database that did not answer; finished "
                "matches wait and are archived when it is back. Try again after Retry-After seconds.", retry_after=True),
    ProblemType("unknown-table", 404, "No such table",
                "Online tables (docs/tables.md) are known by the `table_id` `POST /v1/tables` answered; this one "
                "was never opened here, or has been idle longer than the service keeps tables.", ("field",)),
    ProblemType("invalid-invite", 403, "The invite is not valid",
                "An invite is good for one seat of one table, once: this code is not one of the table's, or its "
                "seat has been taken with it. The table's host can hand out fresh ones (GET .../invites).", ("field",)),
    ProblemType("invite-required", 403, "This table takes invites only",
                "A private table's seats are taken with an invite; a seat number is for public tables.", ("field",)),
    ProblemType("seat-taken", 409, "The seat is taken",
                "Someone took this seat first (of two people racing for a seat, exactly one gets it), or it is a "
                "bot's. Nothing changed: choose another free seat.", ("field",)),
    ProblemType("help-refused", 403, "No engine help in a rated match",
                "An online table's match is rated unless its table says `\"rated\": false`: no seat may ask the "
                "engine for a move (suggest) or the coach (hints) while it plays, or the rating would be the "
                "engine's. Open a casual table for help.", ("field",)),
    ProblemType("seat-held", 409, "This player holds a seat of the table already",
                "One person, one seat: a player (the id a host app vouches for) takes one seat of a table, so that "
                "nobody plays against themself (a double click, two tabs, one assertion joining twice). Nothing "
                "changed.", ("field",)),
    ProblemType("rate-limited", 429, "Too many requests of this kind",
                "The service bounds what one client may open or ask for in a while, so that one client's flood "
                "never slows everybody's play: tables opened and seeks made per address and per player, stream "
                "tickets per credential (`limit` names which was reached). Ordinary play never meets them. Nothing "
                "was done: try again after Retry-After seconds.", ("limit",), retry_after=True),
    ProblemType("abort-closed", 409, "The match can no longer be aborted",
                "A match may be aborted (ended with no result, no rating) only before every person at the table "
                "has made a move. Resign instead (POST .../resign). Nothing changed.", ("field",)),
    ProblemType("claim-refused", 409, "No victory to claim",
                "Victory may be claimed only when another seat's person has been gone (no open stream and no call) "
                "for the table's claim time (`claim_after` of the table): the seats and how long each has been "
                "away are in the table's `presence`. Nothing changed.", ("field",)),
    ProblemType("spectators-off", 403, "This table has no spectators",
                "A private table is watched by its seats and its host only, unless its host opened it with "
                "`\"spectators\": true` (then anyone with its spectator link may watch). Nothing was sent.",
                ("field",)),
    ProblemType("table-full", 409, "Every seat of the table is taken", "Nothing changed: try another table.", ("field",)),
    ProblemType("match-over", 409, "The table's match is over",
                "Its seats cannot be taken any more; its host or a seat may deal another (POST .../again).", ("field",)),
    ProblemType("not-seated", 409, "This credential holds no seat",
                "The seat was left already (or the host key, which holds none). Nothing changed.", ("field",)),
    ProblemType("match-not-over", 409, "The table's match is still being played",
                "Play again deals a new match once the current one is over.", ("field",)),
    ProblemType("invalid-credential", 401, "Send a credential of this table",
                "Online tables take a seat's credential (answered by join) or the table's host key in the "
                "header `Authorization: Bearer <value>`, never in a URL or a body: this one is missing, unknown, "
                "or was given up when its seat was left.", ("field",)),
    ProblemType("player-required", 401, "Send a player assertion",
                "A player's inbox (GET /v1/inbox) lists the live games of the player the request proves: the host "
                "app's player assertion as `Authorization: Bearer <assertion>` (docs/tables.md, \"Player ids\"). None "
                "was sent. A guest, who has no id to prove, lists its games by its seats' credentials "
                "(POST /v1/inbox).", ("field",)),
    ProblemType("wrong-table", 403, "The credential is another table's",
                "A seat's credential reaches its own table's matches only.", ("field",)),
    ProblemType("invalid-ticket", 401, "The stream ticket is not valid",
                "A stream ticket (POST /v1/matches/{id}/events/ticket) starts one stream of its match within 30 s "
                "and is spent by it: this one is unknown, spent, expired, or another match's. Ask for a new one.", ("field",)),
    ProblemType("operator-only", 401, "Send the operator's token",
                "The operator's routes (/v1/operator/..., the webhooks' dead letters) take the token the operator "
                "set (GATEWAY_OPERATOR_TOKEN) as `Authorization: Bearer <token>`: this one is missing or wrong. "
                "Without the setting these routes do not exist (404).", ("field",)),
    ProblemType("unknown-tournament", 404, "No such hosted tournament",
                "Hosted tournaments (docs/tournaments.md) are known by the `tournament_id` `POST /v1/tournaments/hosted` "
                "answered; this one was never opened here.", ("field",)),
    ProblemType("tournament-started", 409, "The tournament has started",
                "Its places were fixed when its host started it: nobody joins it any more, and it is not started "
                "twice. Nothing changed.", ("field",)),
    ProblemType("tournament-full", 409, "Every place of the tournament is taken",
                "The tournament has as many people as its `size`. Nothing changed: try another.", ("field",)),
    ProblemType("too-few-participants", 409, "Too few people to start",
                "A Bykovo micro-tournament starts with 4 to 7 people, a Swiss with at least its smallest number; "
                "`detail` says how many there are. Wait for more, then start again. Nothing changed.",
                ("field",)),
    ProblemType("unknown-party", 404, "No such party",
                "A party's code (`POST /v1/seek` with `party: true` answers one: docs/tables.md, \"Seeking as a "
                "pair\") seats its partner opposite its maker: this one was never made here, its table expired, "
                "or this seek asks for another variant, player count, clock or rated than the party's (`detail` "
                "says which it plays). Seek with the party's, or make a party of your own.", ("field",)),
    ProblemType("party-full", 409, "The party's partner is seated",
                "A party's code seats one partner, once: the seat its maker kept is taken (by the partner, or by "
                "a bot once the table's wait for people, `bots_after`, ended). Nothing changed: seek alone, or "
                "make a party of your own.", ("field",)),
    ProblemType("internal-error", 500, "Internal error", "A bug in the gateway; it has been logged."),
)}

#: The plain HTTP errors (`about:blank`) an operation documents besides its types, by the name its
#: documentation uses (they have no /v1/problems page: their status says it all).
PLAIN_TYPES: dict[str, ProblemType] = {t.name: t for t in (
    ProblemType("not-found", 404, "Not Found", "No such path (or, under /v1/problems, no such problem type)."),
    ProblemType("body-too-large", 413, "Payload Too Large",
                "The request body is over the gateway's limit (GATEWAY_MAX_BODY_BYTES, chunked bodies too)."),
    ProblemType("unsupported-media-type", 415, "Unsupported Media Type",
                "Send the body as JSON with Content-Type: application/json."),
)}


def markdown_table() -> str:
    """docs/rest.md's table of problem types, from the catalogue (status, type, title, members)."""
    rows = ["| status | type | title | members |", "|---|---|---|---|"]
    for t in sorted(PROBLEM_TYPES.values(), key=lambda t: (t.status, t.name)):
        members = [f"`{m}`" for m in t.members] + (["`Retry-After` header"] if t.retry_after else [])
        if t.status == 401:
            members.append("`WWW-Authenticate: Bearer` header")
        rows.append(f"| {t.status} | `{t.name}` | {t.title} | {', '.join(members)} |")
    return "\n".join(rows) + "\n"


class HelpRefused(PermissionError):
    """A seat of a rated table's match asked the engine for help (suggest, hints)."""


class SealedForbidden(PermissionError):
    """A sealed-mode caller asked for something its key does not allow (names the field)."""

    def __init__(self, detail: str, field_name: str | None = None) -> None:
        super().__init__(detail)
        self.field = field_name


class UnknownVariant(LookupError):
    """GET /v1/variants/<name> for a name the engine does not list (`known`: the ones it does)."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(name)
        self.name = name
        self.known = known

    def detail(self) -> str:
        """'no variant "kozle"; did you mean "kozel"? (known: ...)', as the engine words it for a match."""
        close = difflib.get_close_matches(self.name.lower(), self.known, n=1, cutoff=0.6)
        mean = f"; did you mean {json.dumps(close[0])}?" if close else ""
        return f"no variant {json.dumps(self.name[:64])}{mean} (known: {', '.join(self.known)})"


class UnknownMatch(LookupError):
    """GET /v1/matches/<id>/spectate for a match the version store does not hold."""


class StreamRefused(RuntimeError):
    """A spectator stream over one of the worker's caps (`limit`: "worker", "match" or "address")."""

    def __init__(self, limit: str, detail: str) -> None:
        super().__init__(detail)
        self.limit = limit


class TableRefused(Exception):
    """An online table refuses a request (`name`: its problem type, e.g. "seat-taken"; `field`: what to blame)."""

    def __init__(self, name: str, detail: str, field_name: str | None = None) -> None:
        super().__init__(detail)
        self.name = name
        self.field = field_name


class SealedModeDisabled(RuntimeError):
    """Sealed mode was asked for, but no keys are configured."""


@dataclass
class Problem(Exception):
    """A problem response about to be sent."""

    status: int
    title: str
    detail: str | None = None
    type: str = "about:blank"
    extensions: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, name: str, detail: str | None = None, **extensions: Any) -> Problem:
        t = PROBLEM_TYPES[name]
        return cls(t.status, t.title, detail, TYPE_PREFIX + name,
                   {k: v for k, v in extensions.items() if v is not None})

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": self.type, "title": self.title, "status": self.status}
        if self.detail:  # messages may quote hostile input: keep them short
            body["detail"] = self.detail if len(self.detail) <= MAX_DETAIL else self.detail[: MAX_DETAIL - 3] + "..."
        body["instance"] = request.path
        body.update(self.extensions)
        return body

    def response(self) -> Response:
        """The answer; a type that says when to try again (`ProblemType.retry_after`) carries Retry-After."""
        resp = current_app.response_class(json.dumps(self.body()), status=self.status, mimetype=MEDIA_TYPE)
        kind = PROBLEM_TYPES.get(self.type.removeprefix(TYPE_PREFIX))
        if kind is not None and kind.retry_after and "Retry-After" not in self.headers:
            resp.headers["Retry-After"] = str(current_app.config.get("RETRY_AFTER", 1))
        for name, value in self.headers.items():
            resp.headers[name] = value
        return resp


def _first_field(messages: Any, prefix: str = "") -> str | None:
    """The path of the first validation message, written as the engine's 400s write theirs
    (``bots[0].level``, ``deal.hands[1]``: an index in brackets), so that one form names a field."""
    if isinstance(messages, Mapping):
        for key, value in messages.items():
            path = f"{prefix}[{key}]" if isinstance(key, int) else f"{prefix}.{key}" if prefix else str(key)
            if key == "_schema":
                path = prefix or None  # type: ignore[assignment]
            return _first_field(value, path or "") or path or None
    return prefix or None


def _action() -> str | None:
    body = request.get_json(silent=True)
    if isinstance(body, dict) and isinstance(body.get("action"), str):
        return str(body["action"])[:200]
    return None


def from_http(error: HTTPException) -> Problem:
    """A werkzeug/webargs HTTP error as a problem (422s carry the marshmallow messages)."""
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    if status == 422 and "messages" in data:
        messages = data["messages"]
        # webargs nests the messages under the location ("json")
        if isinstance(messages, Mapping) and set(messages) <= {"json", "query", "view_args", "headers"}:
            messages = next(iter(messages.values()), messages)
        return Problem.of("validation-error", "the request body does not match its schema",
                          field=_first_field(messages), errors=messages)
    if status == 400 and isinstance(getattr(error, "exc", None), ValueError):
        # webargs: the body is not JSON (JSONDecodeError) or not UTF-8 (UnicodeDecodeError)
        return Problem.of("malformed-json", f"the body is not JSON the gateway accepts: {error.exc}")  # type: ignore[attr-defined]
    phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else error.name
    problem = Problem(status, phrase, error.description)
    if status == 405:
        allow = dict(error.get_headers()).get("Allow")
        if allow:
            problem.headers["Allow"] = allow
    return problem


def from_exception(exc: BaseException) -> Problem:
    """The one mapping from what the gateway raises to what the client sees."""
    if isinstance(exc, Problem):
        return exc
    if isinstance(exc, HTTPException):
        return from_http(exc)
    if isinstance(exc, EngineMisdeal):
        return Problem.of("misdeal", exc.details, action=_action())
    if isinstance(exc, EngineIllegal):
        return Problem.of("illegal-action", exc.details, action=_action())
    if isinstance(exc, EngineMalformed):
        return Problem.of("malformed", exc.details, field=exc.field, action=_action())
    if isinstance(exc, EngineBusy):
        return Problem.of("engine-busy", f"every bot of the rules engine is thinking for other calls "
                                         f"({exc.method}); try again after Retry-After seconds")
    if isinstance(exc, TableRefused):
        problem = Problem.of(exc.name, str(exc), field=exc.field)
        if problem.status == 401:
            problem.headers["WWW-Authenticate"] = "Bearer"
        return problem
    if isinstance(exc, StreamRefused):
        problem = Problem.of("too-many-streams", str(exc), limit=exc.limit)
        problem.headers["Retry-After"] = str(max(1, current_app.config.get("RETRY_AFTER", 1)))  # a closed stream: not at once
        return problem
    if isinstance(exc, EngineTooLarge):
        log.warning("engine %s: %s", exc.method, exc.details)
        sizes = f" ({exc.size:,} bytes, the limit is {exc.limit:,})" if exc.size is not None else ""
        return Problem.of("too-large", f"the {exc.what} of {exc.method} is over the service's message limit{sizes}",
                          what=exc.what, size=exc.size, limit=exc.limit)
    if isinstance(exc, EngineUnavailable):
        # Its details name the engine's addresses: logged for the operator, never sent to clients.
        log.warning("engine %s unavailable: %s", exc.method, exc.details)
        return Problem.of("engine-unavailable", f"the rules engine did not answer ({exc.method}); "
                                                "try again after Retry-After seconds")
    if isinstance(exc, EngineDeadline):
        return Problem.of("engine-timeout", f"engine {exc.method}: no answer within the deadline")
    if isinstance(exc, EngineFailed):
        log.error("engine %s failed: %s %s", exc.method, exc.code, exc.details)
        return Problem.of("engine-error", f"engine {exc.method} answered {exc.code}")
    if isinstance(exc, TokenError):
        return Problem.of("invalid-token", str(exc), field="token")
    if isinstance(exc, StaleToken):
        return Problem.of("stale-token", str(exc), field="token", latest=exc.latest)
    if isinstance(exc, MatchExpired):
        return Problem.of("match-expired", "token: this sealed match has been idle longer than the service "
                                           "keeps matches; start a new one", field="token")
    if isinstance(exc, StoreUnavailable):
        log.error("token version store: %s", exc)
        return Problem.of("store-unavailable", "the token version store did not answer")
    if isinstance(exc, SeatKeyError):
        return Problem.of("wrong-seat-key", str(exc), field="seat_key")
    if isinstance(exc, SealedForbidden):
        return Problem.of("sealed-forbidden", str(exc), field=exc.field)
    if isinstance(exc, HelpRefused):
        return Problem.of("help-refused", str(exc), field="token")
    if isinstance(exc, UnknownMatch):
        return Problem.of("unknown-match", f"no live sealed match {str(exc.args[0])[:64]!r}", field="match_id")
    if isinstance(exc, UnknownVariant):
        return Problem.of("unknown-variant", exc.detail(), field="name")
    if isinstance(exc, SealedModeDisabled):
        return Problem.of("sealed-mode-disabled", str(exc) or None)
    if isinstance(exc, UnknownPlayer):
        return Problem.of("unknown-player", f"no player {str(exc.args[0])[:80]!r} in the archive", field="player_id")
    if isinstance(exc, NotArchived):
        return Problem.of("not-archived", f"no archived match {str(exc.args[0])[:64]!r}", field="match_id")
    if isinstance(exc, BadCursor):
        return Problem.of("bad-cursor", str(exc), field="cursor")
    if isinstance(exc, PlayerIdError):
        return Problem.of("invalid-player", str(exc), field="player")
    if isinstance(exc, ArchiveUnavailable):
        log.error("archive: %s", exc)  # names the database: for the operator, not the client
        return Problem.of("archive-unavailable", "the archive database did not answer")
    log.error("unhandled error on %s %s", request.method, request.path, exc_info=exc)
    return Problem.of("internal-error")


def handle(exc: Exception) -> Response:
    return from_exception(exc).response()


def register(app: Flask) -> None:
    """Every exception becomes a problem response (flask-smorest's own JSON errors included)."""
    app.register_error_handler(Exception, handle)
    app.register_error_handler(HTTPException, handle)
