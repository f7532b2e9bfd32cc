"""A typed client of the REST gateway (docs/rest.md), over httpx.

`RestClient` sends one request per call: JSON in, JSON out, an error answer raised
as the `ProblemError` subclass of its type (`clients.sdk.errors`), no answer at all
as a `TransportError` of its kind (`Unreachable`, `ConnectionLost`, `AnswerTimeout`,
`UnreadableAnswer`). A `503` (engine or token store unavailable), a `429` engine-busy
and a gateway that cannot be reached are retried with exponential backoff, waiting at
least what `Retry-After` asks; every request has a timeout.

Given several gateway addresses (gateways in front of one store), a call goes on
through the next one when one cannot be reached, and the client stays there
(`clients.sdk.gateways`). A request that may have reached a gateway before its
connection broke is sent again only if it is a `GET`: a move is never played twice
by the client's own retry.

Two ways to hold a match, as the gateway has two carriers:

- `Match` (transparent mode): the whole `state` travels with every call; whoever
  holds it sees every hand. For backends and pass-and-play.
- `SealedMatch` (sealed mode): an encrypted `token` and the seat keys this holder
  was given; every answer replaces the token and carries the acting seat's `view`.

Both keep the latest answer's `view`, `scores` and `events`, and replace their
carrier with each answer, so a caller never handles a token or state itself.
Computer opponents (`bots=[Bot(1, "expert"), ...]`) are played by the service:
each answer carries every event up to the moment a human seat is to move.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Self

import httpx

from clients.sdk.errors import (
    AnswerTimeout,
    ConnectionLost,
    EngineBusy,
    ProblemError,
    ServerProblem,
    TransportError,
    UnreadableAnswer,
    problem_of,
    transport_error,
)
from clients.sdk.gateways import Attempts, Gateways, Retrying
from clients.sdk.tables import TablesApi, parse_invite_link
from clients.sdk.tournaments import TournamentsApi, parse_tournament_link

__all__ = ["Bot", "Legal", "Match", "ReplayResult", "RestClient", "SealedMatch"]

Json = dict[str, Any]
Level = Literal["random", "greedy", "expert"]
LEVELS: tuple[Level, ...] = ("random", "greedy", "expert")
RETRIED_STATUSES = frozenset({503, 429})
#: Seconds a kept-alive connection is reused: under the gateway's own keep-alive (5 s), so that a connection
#: the gateway is closing is not the one a move is sent on.
KEEPALIVE_EXPIRY = 2.0


@dataclass(frozen=True, slots=True)
class Bot:
    """A seat the service plays, at a level: `random`, `greedy` or `expert`."""

    seat: int
    level: Level = "expert"

    def to_json(self) -> Json:
        return {"seat": self.seat, "level": self.level}


@dataclass(frozen=True, slots=True)
class Legal:
    """The seat to move (None once the game is over) and, if the caller may see them, its legal actions."""

    seat: int | None
    actions: list[str]


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """How far a replay got; a refusal is part of the answer, not an exception."""

    applied: int
    ok: bool
    failed_index: int
    reason: str
    error_kind: str
    events: list[Json]


class RestClient(TablesApi, TournamentsApi):
    """A REST gateway at `url` ("http://127.0.0.1:8080"), or several in front of one store
    (`["http://a:8080", "http://b:8080"]`: the first is used until it fails, then the next).

    Online tables (`create_table`, `list_tables`, `table`, `join_table`, `join_link`, `seat_for`) come from
    `clients.sdk.tables.TablesApi`; hosted tournaments (`open_tournament`, `list_tournaments`, `tournament`,
    `join_tournament`, `join_tournament_link`, `participant`, `start_tournament`, `tournament_events`) from
    `clients.sdk.tournaments.TournamentsApi`.

    `timeout` bounds each request (seconds); `retries` is how many times a `503`, a `429` engine-busy or
    gateways that cannot be reached are tried again after waiting `backoff * 2**n` (jittered, at most
    `max_backoff`) or what `Retry-After` says, whichever is longer (moving to another address costs no
    wait and no retry). `on_retry` is told each time a call or a stream moves on or waits (`Retrying`).
    One client may serve several threads; `close()` (or `with`) closes its kept-alive connections.
    """

    def __init__(self, url: str | Sequence[str] = "http://127.0.0.1:8080", *, timeout: float = 10.0,
                 retries: int = 4, backoff: float = 0.2, max_backoff: float = 5.0,
                 on_retry: Callable[[Retrying], None] | None = None) -> None:
        self.gateways = Gateways(url, on_retry)
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._http = httpx.Client(timeout=timeout, follow_redirects=True,
                                  limits=httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY),
                                  headers={"Accept": "application/json"})

    @property
    def url(self) -> str:
        """The gateway address in use now."""
        return self.gateways.current

    @property
    def urls(self) -> list[str]:
        """Every gateway address this client may use."""
        return list(self.gateways.urls)

    @classmethod
    def for_link(cls, link: str, *more: str, **settings: Any) -> Self:
        """A client of the gateway an invite link points at (`http://host:port/play?table=...&invite=...`),
        then of the addresses in `more` (other gateways of the same store)."""
        return cls([parse_invite_link(link)[0], *more], **settings)

    @classmethod
    def for_tournament_link(cls, link: str, *more: str, **settings: Any) -> Self:
        """A client of the gateway a tournament's link points at (`http://host:port/play?tournament=...`),
        then of the addresses in `more`."""
        return cls([parse_tournament_link(link)[0], *more], **settings)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # ------------------------------------------------------------ transport

    def _once(self, address: str, method: str, path: str, body: Json | None, auth: str | None = None) -> Any:
        headers = {} if auth is None else {"Authorization": f"Bearer {auth}"}   # only ever in this header
        what = f"{method} {address}{path}"
        try:
            reply = self._http.request(method, address + path, json=body, headers=headers)
        except (httpx.HTTPError, httpx.InvalidURL, OSError) as err:
            raise transport_error(err, what, address) from err
        if reply.is_error:
            raise problem_of(reply)
        try:
            return reply.json()
        except ValueError as err:
            raise UnreadableAnswer(f"{what}: the answer is not JSON ({reply.headers.get('Content-Type')})",
                                   address) from err

    def request(self, method: str, path: str, body: Json | None = None, *, auth: str | None = None) -> Any:
        """One call; an error answer raises its problem class. Retried on 503, on 429 engine-busy, on a gateway
        that cannot be reached (another address first) and, for a `GET`, on a connection lost before the
        answer (not on a timeout: `timeout` bounds the call). `auth`: a credential sent as `Authorization: Bearer` (tables, docs/tables.md)."""
        attempts = Attempts(self.gateways, self.retries, self.backoff, self.max_backoff)
        while True:
            address = self.url
            try:
                return self._once(address, method, path, body, auth)
            except (ServerProblem, EngineBusy) as err:
                if err.status not in RETRIED_STATUSES:
                    raise
                wait = attempts.after(err, address, move_on=err.status == 503, at_least=err.retry_after or 0.0)
                failure: Exception = err
            except TransportError as err:
                # sent and perhaps acted on: only a GET whose connection broke is sent again (a timeout is the
                # caller's bound, an answer that is not the gateway's would come again)
                lost_get = method == "GET" and isinstance(err, ConnectionLost) and not isinstance(err, AnswerTimeout)
                if err.maybe_applied and not lost_get:
                    raise
                wait = attempts.after(err, address)
                failure = err
            if wait is None:
                raise failure
            time.sleep(wait)

    def post(self, path: str, body: Json) -> Json:
        answer: Json = self.request("POST", path, body)
        return answer

    # ------------------------------------------------------------ discovery

    def variants(self) -> list[Json]:
        """Every variant: name, family, player counts, options."""
        found: list[Json] = self.request("GET", "/v1/variants")["variants"]
        return found

    def variant(self, name: str) -> Json:
        found: Json = self.request("GET", f"/v1/variants/{name}")
        return found

    def ready(self) -> bool:
        """True when the gateway and its engine answer (`/readyz`)."""
        try:
            self._once(self.url, "GET", "/readyz", None)
        except (ProblemError, TransportError):
            return False
        return True

    # ------------------------------------------------------------ creating

    @staticmethod
    def _new_body(variant: str, players: int, options: Json | None, seed: int | None, deal: Json | None,
                  setup: Json | None, no_deal: bool, bots: Sequence[Bot] | None) -> Json:
        body: Json = {"variant": variant, "players": players}
        for key, value in (("options", options), ("seed", seed), ("deal", deal), ("setup", setup)):
            if value is not None:
                body[key] = value
        if no_deal:
            body["no_deal"] = True
        if bots:
            body["bots"] = [bot.to_json() for bot in bots]
        return body

    def create(self, variant: str, players: int, *, options: Json | None = None, seed: int | None = None,
               deal: Json | None = None, setup: Json | None = None, no_deal: bool = False,
               bots: Sequence[Bot] | None = None) -> Match:
        """A transparent match: the answer's `state` is held by the returned `Match`."""
        body = self._new_body(variant, players, options, seed, deal, setup, no_deal, bots)
        return Match(self, self.post("/v1/matches", body))

    def create_sealed(self, variant: str, players: int, *, options: Json | None = None,
                      bots: Sequence[Bot] | None = None, seat: int | None = None,
                      setup: Json | None = None) -> SealedMatch:
        """A sealed match. `seat`: the seat this holder plays (its own view is fetched at once);
        None: the holder keeps every key (a lobby, or pass-and-play) and acts as the seat to move."""
        body = self._new_body(variant, players, options, None, None, setup, False, bots)
        body["mode"] = "sealed"
        match = SealedMatch(self, self.post("/v1/matches", body), seat=seat)
        if seat is not None:
            match.refresh()
        return match

    # ------------------------------------------------------------ calls on a carrier

    def legal(self, carrier: Json) -> Legal:
        answer = self.post("/v1/matches/legal", carrier)
        return Legal(answer["seat"], list(answer.get("actions", [])))

    def apply(self, carrier: Json, action: str, seat: int | None = None) -> Json:
        body = {**carrier, "action": action}
        if seat is not None:
            body["seat"] = seat
        return self.post("/v1/matches/apply", body)

    def replay(self, carrier: Json, actions: Sequence[str]) -> Json:
        return self.post("/v1/matches/replay", {**carrier, "actions": list(actions)})

    def view(self, carrier: Json, seat: int | None = None) -> Json:
        return self.post("/v1/matches/view", carrier if seat is None else {**carrier, "seat": seat})

    def timeout_seat(self, carrier: Json, seat: int | None = None) -> Json:
        return self.post("/v1/matches/timeout", carrier if seat is None else {**carrier, "seat": seat})

    def next_round(self, carrier: Json, deal: Json | None = None) -> Json:
        return self.post("/v1/matches/next-round", carrier if deal is None else {**carrier, "deal": deal})

    def suggest(self, carrier: Json, level: Level = "expert", *, budget_ms: int | None = None,
                seed: int | None = None) -> str:
        """The action a bot of `level` would play for the seat to move (sealed: for the key's seat)."""
        body: Json = {**carrier, "level": level}
        if budget_ms is not None:
            body["budget_ms"] = budget_ms
        if seed is not None:
            body["seed"] = seed
        action: str = self.post("/v1/matches/suggest", body)["action"]
        return action

    def hints(self, carrier: Json) -> Json:
        """What the expert knows for the seat's view."""
        return self.post("/v1/matches/hints", carrier)


class _Held:
    """What both kinds of match keep from their latest answer."""

    client: RestClient
    answer: Json
    view: Json
    events: list[Json]
    scores: list[int]

    def _take(self, answer: Json) -> list[Json]:
        self.answer = answer
        self.events = list(answer.get("events", []))
        if "view" in answer:
            self.view = answer["view"]
        if "scores" in answer:
            self.scores = list(answer["scores"])
        return self.events

    @property
    def variant(self) -> str:
        return str(self.view.get("variant", ""))

    @property
    def to_move(self) -> int | None:
        seat: int | None = self.view.get("to_move")
        return seat

    @property
    def round_over(self) -> bool:
        """The round is over (Kingdomino: the game is; a dynasty's games follow in the same match)."""
        if self.variant == "kingdomino":
            return bool(self.view.get("game_over"))
        return bool(self.view.get("round_over"))

    @property
    def match_over(self) -> bool:
        if self.variant == "kingdomino":
            return bool(self.view.get("game_over"))
        return bool(self.view.get("match_over"))


class Match(_Held):
    """A transparent match: `state` is the whole state; `view` is refreshed by `view(seat)` only."""

    def __init__(self, client: RestClient, answer: Json) -> None:
        self.client = client
        self.view = {}
        self.scores = []
        self.state: Json = answer["state"]
        #: The log lines that left the state as rounds ended (each answer's ``record_lines``, joined in
        #: order): what the match's record is exported with (`record`, docs/records.md).
        self.record_lines: list[str] = []
        self._take(answer)

    def _take(self, answer: Json) -> list[Json]:
        self.state = answer.get("state", self.state)
        self.record_lines.extend(answer.get("record_lines", []))
        return super()._take(answer)

    def record(self, view: str = "full", names: Sequence[str | None] | None = None) -> Json:
        """The match's record (``{"record", "text"}``) as `view` sees it, exported with the lines kept."""
        body: Json = {**self.carrier, "view": view, "prior": self.record_lines}
        if names is not None:
            body["names"] = list(names)
        return self.client.post("/v1/matches/record", body)

    @property
    def carrier(self) -> Json:
        return {"state": self.state}

    def legal(self) -> Legal:
        return self.client.legal(self.carrier)

    def apply(self, action: str, seat: int | None = None) -> list[Json]:
        """Apply one action; the events it caused (bots' moves after it included). Refused: raises, unchanged."""
        return self._take(self.client.apply(self.carrier, action, seat))

    def replay(self, actions: Sequence[str]) -> ReplayResult:
        answer = self.client.replay(self.carrier, actions)
        self._take(answer)
        return ReplayResult(answer["applied"], answer["ok"], answer["failed_index"], answer["reason"],
                            answer["error_kind"], self.events)

    def seat_view(self, seat: int) -> Json:
        """What `seat` may see (also kept in `view`)."""
        self._take({**self.client.view(self.carrier, seat), "events": self.events})
        return self.view

    def timeout(self, seat: int) -> list[Json]:
        return self._take(self.client.timeout_seat(self.carrier, seat))

    def next_round(self, deal: Json | None = None) -> list[Json]:
        return self._take(self.client.next_round(self.carrier, deal))

    def suggest(self, level: Level = "expert", *, budget_ms: int | None = None, seed: int | None = None) -> str:
        return self.client.suggest(self.carrier, level, budget_ms=budget_ms, seed=seed)

    def hints(self) -> Json:
        return self.client.hints(self.carrier)


class SealedMatch(_Held):
    """A sealed match: the latest `token`, the keys this holder has, and the acting seat's latest `view`.

    `seat` is the seat this holder plays; with None the holder has every key and each
    call acts as the seat to move (pass-and-play). Calls take `seat=` to act as another
    seat whose key is held.
    """

    def __init__(self, client: RestClient, answer: Json, *, seat: int | None = None) -> None:
        self.client = client
        self.view = {}
        self.scores = []
        self.token: str = answer["token"]
        self.seq: int = answer.get("seq", 0)
        self.match_id: str = answer.get("match_id", "")
        self.seat_keys: list[str | None] = list(answer.get("seat_keys", []))
        self.host_key: str | None = answer.get("host_key")
        self.seat = seat
        self._take(answer)

    def _take(self, answer: Json) -> list[Json]:
        self.token = answer.get("token", self.token)
        self.seq = answer.get("seq", self.seq)
        return super()._take(answer)

    def key(self, seat: int | None = None) -> str:
        """The key of `seat` (default: this holder's seat, else the seat to move)."""
        chosen = seat if seat is not None else self.seat if self.seat is not None else self.to_move
        if chosen is None:
            if self.host_key is None:
                raise LookupError("no seat to act for: the game is over and no host key is held")
            return self.host_key
        if chosen >= len(self.seat_keys) or self.seat_keys[chosen] is None:
            raise LookupError(f"this holder has no key for seat {chosen}")
        key = self.seat_keys[chosen]
        assert key is not None
        return key

    def carrier(self, seat: int | None = None) -> Json:
        return {"token": self.token, "seat_key": self.key(seat)}

    def forget_other_keys(self) -> None:
        """Drop every key but this holder's own seat's (and the host key): what a player should hold."""
        if self.seat is None:
            raise ValueError("no seat of its own")
        self.seat_keys = [k if i == self.seat else None for i, k in enumerate(self.seat_keys)]

    def legal(self, seat: int | None = None) -> Legal:
        return self.client.legal(self.carrier(seat))

    def legal_actions(self, seat: int | None = None) -> list[str]:
        return self.legal(seat).actions

    def apply(self, action: str, seat: int | None = None) -> list[Json]:
        """Apply one action of `seat`; the events it caused (the bots' moves after it included)."""
        return self._take(self.client.apply(self.carrier(seat), action))

    def replay(self, actions: Sequence[str], seat: int | None = None) -> ReplayResult:
        answer = self.client.replay(self.carrier(seat), actions)
        self._take(answer)
        return ReplayResult(answer["applied"], answer["ok"], answer["failed_index"], answer["reason"],
                            answer["error_kind"], self.events)

    def refresh(self, seat: int | None = None) -> Json:
        """Fetch `seat`'s view (kept in `view`; the latest events are kept too)."""
        answer = self.client.view(self.carrier(seat))
        self.view = answer["view"]
        self.scores = list(answer.get("scores", self.scores))
        return self.view

    def timeout(self, seat: int | None = None) -> list[Json]:
        """`seat` times out (its own key; the host key may time out any seat)."""
        if seat is not None and self.seat_keys[seat] is None and self.host_key is not None:
            return self._take(self.client.timeout_seat({"token": self.token, "seat_key": self.host_key}, seat))
        return self._take(self.client.timeout_seat(self.carrier(seat)))

    def next_round(self, seat: int | None = None) -> list[Json]:
        """Deal the next round from the match seed (after it, bots play up to a human's turn)."""
        chosen = seat if seat is not None else self.seat
        if chosen is None and self.host_key is not None:
            return self._take(self.client.next_round({"token": self.token, "seat_key": self.host_key}))
        return self._take(self.client.next_round(self.carrier(chosen)))

    def suggest(self, level: Level = "expert", *, seat: int | None = None, budget_ms: int | None = None,
                seed: int | None = None) -> str:
        return self.client.suggest(self.carrier(seat), level, budget_ms=budget_ms, seed=seed)

    def hints(self, seat: int | None = None) -> Json:
        return self.client.hints(self.carrier(seat))
