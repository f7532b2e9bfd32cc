"""Problem details (RFC 9457) as exceptions: one class per problem type of the gateway.

Every error answer of the REST gateway is `application/problem+json` with a `type`
such as `/v1/problems/stale-token`; `raise_for(status, body)` raises the class of
that type (`StaleToken`), every class a `ProblemError` carrying the whole answer.
A type this SDK does not know yet (a newer gateway) raises the class of its
status family (`ClientProblem` for 4xx, `ServerProblem` for 5xx), so callers can
always catch by kind.

No answer at all is a `TransportError`, of one of its kinds: `Unreachable` (nothing was sent),
`ConnectionLost` and `AnswerTimeout` (sent, the answer lost: it may have counted), `UnreadableAnswer`,
and `StreamFailed` (a seat's stream given up). `transport_error` maps the HTTP library's exceptions to them.
"""
from __future__ import annotations

from typing import Any

import httpx

__all__ = [
    "ArchiveUnavailable", "BadCursor", "ClientProblem", "EngineBusy", "EngineError", "EngineTimeout", "EngineUnavailable", "IllegalAction", "InternalError",
    "InvalidPlayer", "InvalidToken", "Malformed", "MalformedJson", "MatchExpired", "Misdeal", "NotArchived", "NotFound", "ProblemError",
    "SealedForbidden", "HelpRefused", "SealedModeDisabled", "ServerProblem", "StaleToken", "StoreUnavailable",
    "TooLarge", "TooManyStreams", "TransportError", "Unreachable", "ConnectionLost", "AnswerTimeout",
    "UnreadableAnswer", "StreamFailed", "transport_error", "problem_of", "UnknownMatch", "UnknownPlayer", "UnknownVariant", "ValidationFailed", "WrongSeatKey", "PROBLEM_CLASSES", "raise_for",
    "InvalidCredential", "InvalidInvite", "InvalidTicket", "InviteRequired", "MatchNotOver", "MatchOver", "NotSeated",
    "SeatTaken", "SeatHeld", "TABLE_PROBLEMS", "TableFull", "UnknownTable", "WrongTable",
    "RateLimited", "AbortClosed", "ClaimRefused", "SpectatorsOff", "OperatorOnly", "PlayerRequired",
    "UnknownTournament", "TournamentStarted", "TournamentFull", "TooFewParticipants", "UnknownParty", "PartyFull",
]

TYPE_PREFIX = "/v1/problems/"


class TransportError(OSError):
    """No usable answer from a gateway (the kinds below say how). `address` is the gateway that failed.

    `maybe_applied`: the request may have reached the gateway and been acted on before the failure, so a
    call that changes something (a move) must not simply be sent again: ask what is there now first.
    """

    maybe_applied = False

    def __init__(self, message: str, address: str = "") -> None:
        super().__init__(message)
        self.address = address


class Unreachable(TransportError):
    """No connection could be made (refused, unknown host, no answer to connect): nothing was sent."""


class ConnectionLost(TransportError):
    """The connection broke after the request was sent (reset, closed before or during the answer)."""

    maybe_applied = True


class AnswerTimeout(ConnectionLost):
    """The request was sent and no answer came within the client's timeout."""


class UnreadableAnswer(TransportError):
    """An answer that is not the gateway's (not JSON, or a stream that is not `text/event-stream`): a proxy's
    page, say."""

    maybe_applied = True


class StreamFailed(TransportError):
    """A seat's stream of events could not be kept up: every address failed, again and again."""


def transport_error(err: BaseException, what: str, address: str = "") -> TransportError:
    """The `TransportError` kind of a failure of httpx (or of the socket under it) during `what`: the one place
    the HTTP library's exceptions are mapped."""
    if isinstance(err, TransportError):
        return err
    if isinstance(err, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout | httpx.UnsupportedProtocol
                   | httpx.InvalidURL):
        return Unreachable(f"{what}: {err or type(err).__name__}", address)
    if isinstance(err, httpx.TimeoutException):
        return AnswerTimeout(f"{what}: no answer in time ({type(err).__name__})", address)
    return ConnectionLost(f"{what}: {err or type(err).__name__}", address)


class ProblemError(Exception):
    """An error answer of the gateway. `problem` is the whole problem object."""

    #: The problem type's name (`/v1/problems/<name>`), or "" for a status-only class.
    type_name = ""

    def __init__(self, status: int, problem: dict[str, Any], retry_after: float | None = None) -> None:
        self.status = status
        self.problem = problem
        self.title: str = str(problem.get("title", ""))
        self.detail: str = str(problem.get("detail", "") or self.title)
        self.field: str | None = problem.get("field")
        self.action: str | None = problem.get("action")
        self.retry_after = retry_after
        super().__init__(f"{status} {problem.get('type', 'about:blank')}: {self.detail}")


class ClientProblem(ProblemError):
    """A 4xx: the request is at fault; sending it again changes nothing."""


class ServerProblem(ProblemError):
    """A 5xx: the service is at fault (some are worth retrying, see `retry_after`)."""


class NotFound(ClientProblem):
    """404 about:blank (no such path)."""


class ValidationFailed(ClientProblem):
    """422 validation-error: the body does not match the schema. `errors` lists the messages by field."""

    type_name = "validation-error"

    @property
    def errors(self) -> dict[str, Any]:
        found: dict[str, Any] = self.problem.get("errors", {})
        return found


class MalformedJson(ClientProblem):
    """400 malformed-json."""

    type_name = "malformed-json"


class Malformed(ClientProblem):
    """400 malformed: bad notation, an unknown option, a broken state."""

    type_name = "malformed"


class IllegalAction(ClientProblem):
    """409 illegal-action: well formed, but the rules forbid it now; nothing changed."""

    type_name = "illegal-action"


class Misdeal(ClientProblem):
    """409 misdeal: an explicit deal the variant refuses."""

    type_name = "misdeal"


class UnknownVariant(ClientProblem):
    """404 unknown-variant."""

    type_name = "unknown-variant"


class InvalidToken(ClientProblem):
    """400 invalid-token: altered, truncated, foreign, or sealed with a retired key."""

    type_name = "invalid-token"


class StaleToken(ClientProblem):
    """409 stale-token: not the match's latest token (`latest` is the latest sequence number)."""

    type_name = "stale-token"

    @property
    def latest(self) -> int | None:
        latest: int | None = self.problem.get("latest")
        return latest


class UnknownMatch(ClientProblem):
    """404 unknown-match: no live sealed match by that id (the spectator stream)."""

    type_name = "unknown-match"


class MatchExpired(ClientProblem):
    """410 match-expired: the sealed match was idle too long."""

    type_name = "match-expired"


class WrongSeatKey(ClientProblem):
    """403 wrong-seat-key: the key is not one of this match's."""

    type_name = "wrong-seat-key"


class SealedForbidden(ClientProblem):
    """403 sealed-forbidden: the key does not allow this call."""

    type_name = "sealed-forbidden"


class HelpRefused(ClientProblem):
    """403 help-refused: a seat of a rated table's match asked for a suggestion or hints (a casual table allows them)."""

    type_name = "help-refused"


class EngineBusy(ClientProblem):
    """429 engine-busy: every bot of the engine was thinking for other calls (retried by the client,
    after `Retry-After`, before it is raised)."""

    type_name = "engine-busy"


class TooManyStreams(ClientProblem):
    """429 too-many-streams: a spectator stream over a gateway worker's cap (in all, per match or per
    client address: `limit`); close streams you no longer read, or try again after `Retry-After`."""

    type_name = "too-many-streams"


class RateLimited(ClientProblem):
    """429 rate-limited: one of the service's limits on what a client may open or ask for in a while (tables
    opened, seeks, stream tickets: `limit` names which) was reached; nothing was done. Try again after
    `retry_after` seconds (the answer's `Retry-After`). Ordinary play never meets them."""

    type_name = "rate-limited"

    @property
    def limit(self) -> str | None:
        """Which limit was reached (the problem's `limit` member)."""
        limit = self.problem.get("limit")
        return None if limit is None else str(limit)


class TooLarge(ClientProblem):
    """413 too-large: the request, or the answer it asks for, is over the service's message limit."""

    type_name = "too-large"


class SealedModeDisabled(ServerProblem):
    """501 sealed-mode-disabled: the operator configured no token keys."""

    type_name = "sealed-mode-disabled"


class EngineUnavailable(ServerProblem):
    """503 engine-unavailable (retried by the client before it is raised)."""

    type_name = "engine-unavailable"


class StoreUnavailable(ServerProblem):
    """503 store-unavailable: the token version store did not answer (retried before it is raised)."""

    type_name = "store-unavailable"


class EngineTimeout(ServerProblem):
    """504 engine-timeout."""

    type_name = "engine-timeout"


class EngineError(ServerProblem):
    """502 engine-error."""

    type_name = "engine-error"


class UnknownPlayer(ClientProblem):
    """404 unknown-player: the archive knows no player by this id (none of their matches has ended)."""

    type_name = "unknown-player"


class NotArchived(ClientProblem):
    """404 not-archived: the archive keeps no finished match by this id."""

    type_name = "not-archived"


class BadCursor(ClientProblem):
    """400 bad-cursor: a page cursor that is not the `next` of this list's previous page."""

    type_name = "bad-cursor"


class InvalidPlayer(ClientProblem):
    """400 invalid-player: a player assertion that does not check (garbled, expired, another key)."""

    type_name = "invalid-player"


class ArchiveUnavailable(ServerProblem):
    """503 archive-unavailable: the archive database did not answer; finished matches wait for it."""

    type_name = "archive-unavailable"


class InternalError(ServerProblem):
    """500 internal-error: a gateway bug."""

    type_name = "internal-error"


# ------------------------------------------------------------------ online tables (docs/tables.md)

class InvalidCredential(ClientProblem):
    """401 invalid-credential: no `Authorization: Bearer`, or a host key or seat credential the gateway does
    not know (never issued, or given up by `leave`)."""

    type_name = "invalid-credential"


class WrongTable(ClientProblem):
    """403 wrong-table: a credential of another table (or of another table's match)."""

    type_name = "wrong-table"


class UnknownTable(ClientProblem):
    """404 unknown-table: no table by this id."""

    type_name = "unknown-table"


class InvalidInvite(ClientProblem):
    """403 invalid-invite: an invite code that is unknown or already used."""

    type_name = "invalid-invite"


class InviteRequired(ClientProblem):
    """403 invite-required: a seat number on a private table; only an invite opens it."""

    type_name = "invite-required"


class SeatTaken(ClientProblem):
    """409 seat-taken: someone took that seat first (of two racing for it, exactly one gets it)."""

    type_name = "seat-taken"


class SeatHeld(ClientProblem):
    """409 seat-held: this player holds a seat of the table already (one person, one seat)."""

    type_name = "seat-held"


class TableFull(ClientProblem):
    """409 table-full: no seat of the table is free."""

    type_name = "table-full"


class MatchOver(ClientProblem):
    """409 match-over: the table's match is over (join it after "play again" deals the next one)."""

    type_name = "match-over"


class NotSeated(ClientProblem):
    """409 not-seated: the credential's seat was already left."""

    type_name = "not-seated"


class MatchNotOver(ClientProblem):
    """409 match-not-over: "play again" while the current match is being played."""

    type_name = "match-not-over"


class InvalidTicket(ClientProblem):
    """401 invalid-ticket: a stream ticket that is unknown, expired or spent."""

    type_name = "invalid-ticket"


class AbortClosed(ClientProblem):
    """409 abort-closed: the match can no longer be aborted (every person at the table has made a move); resign
    instead (`Seat.resign()`). Nothing changed."""

    type_name = "abort-closed"


class ClaimRefused(ClientProblem):
    """409 claim-refused: no victory to claim: no other person's seat has been gone (no open stream, no call)
    for the table's `claim_after` seconds. Nothing changed."""

    type_name = "claim-refused"


class SpectatorsOff(ClientProblem):
    """403 spectators-off: a private table watched without its spectator link (`?watch=<code>`), or one opened
    without spectators. Nothing was sent."""

    type_name = "spectators-off"


class OperatorOnly(ClientProblem):
    """401 operator-only: an operator's route (the webhooks' dead letters) without the operator's token."""

    type_name = "operator-only"


class PlayerRequired(ClientProblem):
    """401 player-required: a player's inbox asked for without the player assertion that proves who asks
    (a guest lists its games by its credentials instead)."""

    type_name = "player-required"


class UnknownTournament(ClientProblem):
    """404 unknown-tournament: no hosted tournament has this id."""

    type_name = "unknown-tournament"


class TournamentStarted(ClientProblem):
    """409 tournament-started: the tournament has started (nobody joins it, it is not started twice)."""

    type_name = "tournament-started"


class TournamentFull(ClientProblem):
    """409 tournament-full: every place of the tournament is taken."""

    type_name = "tournament-full"


class TooFewParticipants(ClientProblem):
    """409 too-few-participants: the tournament's host started it with too few people."""

    type_name = "too-few-participants"


class UnknownParty(ClientProblem):
    """404 unknown-party: a seek with a party's code that no party has here (never made, expired), or for
    another variant, player count, clock or rated than the party's."""

    type_name = "unknown-party"


class PartyFull(ClientProblem):
    """409 party-full: the seat a party's maker kept for its partner is taken (a code seats one partner, once)."""

    type_name = "party-full"


TABLE_PROBLEMS: tuple[type[ProblemError], ...] = (
    InvalidCredential, WrongTable, UnknownTable, InvalidInvite, InviteRequired, SeatTaken, SeatHeld, TableFull,
    MatchOver, NotSeated, MatchNotOver, InvalidTicket, AbortClosed, ClaimRefused, SpectatorsOff,
    UnknownTournament, TournamentStarted, TournamentFull, TooFewParticipants, UnknownParty, PartyFull)


_EVERY_CLASS: tuple[type[ProblemError], ...] = (
    ValidationFailed, MalformedJson, Malformed, IllegalAction, Misdeal, UnknownVariant, InvalidToken,
    StaleToken, MatchExpired, UnknownMatch, WrongSeatKey, SealedForbidden, HelpRefused, SealedModeDisabled, EngineUnavailable,
    StoreUnavailable, EngineTimeout, EngineError, InternalError, EngineBusy, TooLarge, TooManyStreams, RateLimited, UnknownPlayer, NotArchived,
    BadCursor, InvalidPlayer, ArchiveUnavailable, OperatorOnly, PlayerRequired, *TABLE_PROBLEMS)
PROBLEM_CLASSES: dict[str, type[ProblemError]] = {cls.type_name: cls for cls in _EVERY_CLASS}


def problem_class(status: int, type_uri: str) -> type[ProblemError]:
    name = type_uri.removeprefix(TYPE_PREFIX) if type_uri.startswith(TYPE_PREFIX) else ""
    if name in PROBLEM_CLASSES:
        return PROBLEM_CLASSES[name]
    if status == 404:
        return NotFound
    return ServerProblem if status >= 500 else ClientProblem


def raise_for(status: int, problem: dict[str, Any], retry_after: float | None = None) -> None:
    """Raise the exception of an error answer."""
    raise problem_class(status, str(problem.get("type", "about:blank")))(status, problem, retry_after)


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def problem_of(reply: httpx.Response) -> ProblemError:
    """The exception of an error answer (read in full): its problem object, or one made of its status."""
    try:
        problem = reply.json()
    except ValueError:
        problem = None
    if not isinstance(problem, dict):
        problem = {"type": "about:blank", "title": reply.reason_phrase, "status": reply.status_code,
                   "detail": reply.content[:200].decode(errors="replace")}
    cls = problem_class(reply.status_code, str(problem.get("type", "about:blank")))
    return cls(reply.status_code, problem, _retry_after(reply.headers.get("Retry-After")))
