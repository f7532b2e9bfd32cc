"""Online tables (docs/tables.md): open a table, list the lobby, take a seat, play it from its credential,
and read the seat's stream of events, resumed after a drop (on another gateway when its own is gone).

    api = RestClient("http://127.0.0.1:8080")
    opened = api.create_table("kozel", 4, seats=["open", "open", "greedy", "expert"])
    anna = api.join_table(opened.table_id, invite=opened.invites[0].code, name="Anna")
    for event in anna.events():          # the seat's view, then every change, until the match ends
        ...

A seat's `credential` (and a table's `host_key`) travels only in the header
`Authorization: Bearer`, never in a URL or a body, and is left out of every `repr`.
`Seat.events()` reads `text/event-stream` (httpx-sse); when the connection drops, goes
silent, or the server ends it early (`event: closed`), it connects again with
`Last-Event-ID` (to the next gateway address when its own cannot be reached), backing off,
a bounded number of times in a row: the caller sees every event once, in order, until
`event: end`.
"""
from __future__ import annotations

import json
import socket
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Self, cast

import httpx
from httpx_sse import EventSource, ServerSentEvent, SSEError

from clients.sdk.errors import (
    ConnectionLost,
    EngineBusy,
    ProblemError,
    ServerProblem,
    StreamFailed,
    TooManyStreams,
    TransportError,
    problem_of,
    transport_error,
)
from clients.sdk.gateways import Attempts, Gateways

if TYPE_CHECKING:
    from clients.sdk.inbox import Inbox, NotificationPage
    from clients.sdk.rest import Legal, RestClient

__all__ = ["EventStream", "Invite", "OpenedTable", "Seat", "Seeked", "StreamEvent", "Table", "TableSeat",
           "parse_invite_link", "parse_watch_link", "seat_spec"]

Json = dict[str, Any]
#: `event: closed` reasons of a stream that simply lasted its time (no event for a while, or its longest):
#: reconnected at once, however often; the others (`shutdown`, `store-unavailable`) are backed off.
QUIET_CLOSES = frozenset({"idle", "max-duration"})
#: Seconds after which a connection that drops counts as having served: the failures in a row start again.
HEALTHY_CONNECTION = 10.0
OnLeave = Literal["wait", "bot"]


# ------------------------------------------------------------------ what the gateway answers

@dataclass(frozen=True, slots=True)
class TableSeat:
    """One seat of a table: `kind` "open" (a person's) or "bot" (with its `level`), whether it is `taken`, the
    name it is shown by, and the `player` id holding a person's seat (`GET /v1/players/{id}`: its ratings).

    Presence, while a match is dealt: `here` (the seat's person has a stream open or called lately) and
    `away_since` (unix seconds since when they have not); both None with no match, and for a bot's seat."""

    seat: int
    kind: str
    level: str | None
    taken: bool
    name: str | None
    player: str | None = None
    here: bool | None = None
    away_since: int | None = None

    @classmethod
    def from_json(cls, data: Json) -> TableSeat:
        here, away = data.get("here"), data.get("away_since")
        return cls(int(data["seat"]), str(data["kind"]), data.get("level"), bool(data.get("taken")), data.get("name"),
                   data.get("player"), None if here is None else bool(here), None if away is None else int(away))

    def away_for(self, now: float | None = None) -> float | None:
        """Seconds this seat's person has been gone (None: here, a bot, or no match dealt)."""
        if self.here is not False or self.away_since is None:
            return None
        return max(0.0, (time.time() if now is None else now) - self.away_since)


@dataclass(frozen=True, slots=True)
class Table:
    """A table as `GET /v1/tables/{id}` answers it; `raw` is the whole answer."""

    table_id: str
    name: str | None
    variant: str
    players: int
    options: Json
    public: bool
    on_leave: str
    seats: list[TableSeat]
    status: str                  # "waiting" | "playing" | "over"
    match_id: str | None
    matches: int
    created: int
    raw: Json = field(repr=False, compare=False)
    #: rated (ratings change, no engine help for a seat) or casual
    rated: bool = True
    #: a private table anyone with its spectator link may watch
    spectators: bool = False
    #: seconds a person's seat must have been gone before the others may claim victory (`Seat.claim()`)
    claim_after: int | None = None

    @classmethod
    def from_json(cls, data: Json) -> Table:
        claim_after = data.get("claim_after")
        return cls(table_id=str(data["table_id"]), name=data.get("name"), variant=str(data["variant"]),
                   players=int(data["players"]), options=dict(data.get("options") or {}),
                   public=bool(data.get("public")), on_leave=str(data.get("on_leave", "wait")),
                   seats=[TableSeat.from_json(s) for s in data.get("seats", [])], status=str(data.get("status", "")),
                   match_id=data.get("match_id"), matches=int(data.get("matches", 0)),
                   created=int(data.get("created", 0)), raw=data, rated=bool(data.get("rated", True)),
                   spectators=bool(data.get("spectators", False)),
                   claim_after=None if claim_after is None else int(claim_after))

    @property
    def free_seats(self) -> list[int]:
        """The open seats nobody has taken yet."""
        return [s.seat for s in self.seats if s.kind == "open" and not s.taken]

    def claimable(self, now: float | None = None) -> list[int]:
        """The seats whose person has been gone at least `claim_after` seconds (as this answer saw them): the
        others may claim victory (`Seat.claim()`). The gateway decides; this is what a client shows."""
        if self.claim_after is None or self.status != "playing":
            return []
        return [s.seat for s in self.seats if (away := s.away_for(now)) is not None and away >= self.claim_after]


@dataclass(frozen=True, slots=True)
class Invite:
    """A single-use invite to one open seat: its `code` (for `join_table`) and a `link` to the gateway's `/play`
    page (for a browser, or `domino play --join LINK`)."""

    seat: int
    code: str
    link: str

    @classmethod
    def from_json(cls, data: Json) -> Invite:
        return cls(int(data["seat"]), str(data["code"]), str(data.get("link", "")))


def parse_invite_link(link: str) -> tuple[str, str, str]:
    """`(gateway_url, table_id, invite_code)` of an invite link `http://host:port/play?table=<id>&invite=<code>`;
    a link that is not one raises `ValueError`."""
    return _parse_table_link(link, "invite", "an invite link")


def parse_watch_link(link: str) -> tuple[str, str, str]:
    """`(gateway_url, table_id, watch_code)` of a spectator link `http://host:port/play?table=<id>&watch=<code>`;
    a link that is not one raises `ValueError`."""
    return _parse_table_link(link, "watch", "a spectator link")


def _parse_table_link(link: str, member: str, what: str) -> tuple[str, str, str]:
    """`(gateway_url, table_id, code)` of a page's link `http://host:port/play?table=<id>&<member>=<code>`."""
    parts = urllib.parse.urlsplit(link.strip())
    query = urllib.parse.parse_qs(parts.query)
    tables, codes = query.get("table", []), query.get(member, [])
    if parts.scheme not in ("http", "https") or not parts.netloc or len(tables) != 1 or len(codes) != 1:
        raise ValueError(f"not {what} (http://host:port/play?table=<id>&{member}=<code>): {link!r}")
    base = parts.path.rsplit("/play", 1)[0] if parts.path.endswith("/play") else ""
    return f"{parts.scheme}://{parts.netloc}{base}", tables[0], codes[0]


def seat_spec(seat: str | Json) -> Json:
    """A seat of `create_table(seats=...)`: "open" (a person's), a bot's level ("random", "greedy", "expert"), or
    the JSON object itself (`{"kind": "bot", "level": "greedy"}`)."""
    if isinstance(seat, dict):
        return seat
    return {"kind": "open"} if seat == "open" else {"kind": "bot", "level": seat}


# ------------------------------------------------------------------ the host's table

@dataclass(slots=True)
class OpenedTable:
    """What opening a table answers: its id, the host key (its owner's credential), one invite per open seat, and
    for a private table with spectators its `spectator_link` (`.../play?table=<id>&watch=<code>`)."""

    client: RestClient = field(repr=False)
    table_id: str
    host_key: str = field(repr=False)
    invites: list[Invite]
    table: Table
    spectator_link: str | None = None

    @property
    def watch_code(self) -> str | None:
        """The code of the spectator link (for `RestClient.table(id, watch=...)` and `watch_events`)."""
        return parse_watch_link(self.spectator_link)[2] if self.spectator_link else None

    def refresh(self) -> Table:
        """The table now (also kept in `table`)."""
        self.table = self.client.table(self.table_id, auth=self.host_key)
        return self.table

    def fresh_invites(self) -> list[Invite]:
        """A fresh invite for every open seat not taken (a seat someone left, or an invite that went astray)."""
        answer = self.client.request("GET", f"/v1/tables/{self.table_id}/invites", auth=self.host_key)
        return [Invite.from_json(i) for i in answer["invites"]]

    def again(self) -> Table:
        """"Play again": a new match for the same seats, once the current one is over (else `MatchNotOver`)."""
        self.table = Table.from_json(self.client.request("POST", f"/v1/tables/{self.table_id}/again", {},
                                                         auth=self.host_key)["table"])
        return self.table

    def as_host(self) -> Seat:
        """The host's side of the table's match as a `Seat` with no seat number: `view()` and `events()` show the
        public view, `next_round()` deals; playing a seat needs that seat's credential."""
        return Seat(self.client, self.table_id, None, self.host_key, None, self.table.match_id)


# ------------------------------------------------------------------ quick play

@dataclass(frozen=True, slots=True)
class Seeked:
    """What a seek answers (`RestClient.seek`): the `seat` taken (play it as any `Seat`), whether this seek
    `opened` its table, the table as it was then, and for a seek with `party=True` the party's code to give
    the partner (`party`; None otherwise)."""

    seat: Seat
    opened: bool
    table: Table
    party: str | None = None


# ------------------------------------------------------------------ a seat

class Seat:
    """A seat taken at a table, played by its `credential` alone from any device (`join_table` answers one).

    `match_id` is the table's current match (None until the last open seat is taken: `wait_for_match()`).
    The latest answer's `state` (the seat's view), `scores` and `seq` are kept. `seat` is None for the host
    (`OpenedTable.as_host()`).
    """

    def __init__(self, client: RestClient, table_id: str, seat: int | None, credential: str,
                 player_id: str | None = None, match_id: str | None = None) -> None:
        self.client = client
        self.table_id = table_id
        self.seat = seat
        self.credential = credential
        self.player_id = player_id
        self.match_id = match_id
        self.state: Json = {}
        self.scores: list[int] = []
        self.seq = 0
        self.over = False

    def __repr__(self) -> str:    # never the credential
        return f"Seat(table_id={self.table_id!r}, seat={self.seat!r}, match_id={self.match_id!r})"

    # -------------------------------------------------------- the match

    def _match(self) -> str:
        if self.match_id is None:
            self.match_id = self.client.table(self.table_id, auth=self.credential).match_id
        if self.match_id is None:
            raise LookupError(f"table {self.table_id} has no match yet: it is dealt when every open seat is "
                              "taken (wait_for_match)")
        return self.match_id

    def _call(self, method: str, route: str, body: Json | None = None) -> Json:
        answer: Json = self.client.request(method, f"/v1/matches/{self._match()}/{route}", body,
                                           auth=self.credential)
        return answer

    def _take(self, answer: Json) -> Json:
        if "view" in answer:
            self.state = answer["view"]
        if "scores" in answer:
            self.scores = list(answer["scores"])
        if isinstance(answer.get("seq"), int):
            self.seq = answer["seq"]
        if "over" in answer:
            self.over = bool(answer["over"])
        elif isinstance(answer.get("view"), dict):   # a move's (or an exit's) answer: its view says
            self.over = bool(answer["view"].get("match_over") or answer["view"].get("game_over"))
        return answer

    def table(self) -> Table:
        """The table now, asked with this seat's credential (a private table shows itself to its seats)."""
        return self.client.table(self.table_id, auth=self.credential)

    def wait_for_match(self, timeout: float = 300.0, poll: float = 0.5) -> str:
        """Wait until the table's match is dealt (every open seat taken); its id. `TimeoutError` after `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            table = self.client.table(self.table_id, auth=self.credential)
            if table.match_id is not None:
                self.match_id = table.match_id
                return table.match_id
            if time.monotonic() >= deadline:
                raise TimeoutError(f"no match dealt at table {self.table_id} within {timeout} s "
                                   f"(free seats: {table.free_seats})")
            time.sleep(poll)

    def view(self) -> Json:
        """The seat's latest (`GET /v1/matches/{id}/seat`), from any device: `match_id`, `table_id`, `seat`,
        `seq`, `token` and `seat_key` (for the token-carrying calls), `view`, `scores`, `over`."""
        return self._take(self._call("GET", "seat"))

    def legal(self) -> Legal:
        """The seat to move and, when it is this seat, its legal actions."""
        from clients.sdk.rest import Legal

        answer = self._call("GET", "legal")
        return Legal(answer.get("seat"), list(answer.get("actions", [])))

    def apply(self, action: str) -> Json:
        """Play `action` for this seat (no token needed): the sealed answer (`seq`, `view`, `scores`, `events`:
        this move and the bots' after it). Out of turn or illegal: `IllegalAction`, nothing changed."""
        return self._take(self._call("POST", "apply", {"action": action}))

    def next_round(self) -> Json:
        """Deal the next round once this one is over (any seat or the host may; when two ask at once, the second
        is refused with a 409 and the round is dealt once)."""
        return self._take(self._call("POST", "next-round", {}))

    def resign(self) -> Json:
        """Resign the match (`POST .../resign`): this seat loses, as its timeout where the variant has a timeout
        rule, else placed last; the answer is as `apply`'s, its `events` `resigned` then the match's end.
        A match already over: `IllegalAction`."""
        return self._take(self._call("POST", "resign", {}))

    def abort(self) -> Json:
        """Abort the match (`POST .../abort`): it ends with no result and no rating. Only before every person at
        the table has made a move; after that `AbortClosed` (resign instead). Events: `aborted`, the end."""
        return self._take(self._call("POST", "abort", {}))

    def claim(self) -> Json:
        """Claim victory (`POST .../claim`) over a person whose seat has been gone (no open stream, no call) for
        the table's `claim_after` seconds (`Table.claimable()`): scored as that seat's timeout. Events: `gone`,
        the end. Nobody gone long enough: `ClaimRefused`."""
        return self._take(self._call("POST", "claim", {}))

    def leave(self) -> Table:
        """Give up the seat: the credential stops working; the table's `on_leave` says who plays it now.
        Leaving a rated table's match once it can no longer be aborted resigns it."""
        answer = self.client.request("POST", f"/v1/tables/{self.table_id}/leave", {}, auth=self.credential)
        return Table.from_json(answer["table"])

    def again(self) -> Table:
        """"Play again" once the match is over: a new match for the same seats (`match_id` follows it)."""
        answer = self.client.request("POST", f"/v1/tables/{self.table_id}/again", {}, auth=self.credential)
        table = Table.from_json(answer["table"])
        self.match_id, self.seq, self.over, self.state = table.match_id, 0, False, {}
        return table

    def ticket(self) -> str:
        """A stream ticket (spent by one stream started within its lifetime): for a browser's `EventSource`,
        which sends no headers. This SDK's own `events()` needs none."""
        ticket: str = self._call("POST", "events/ticket", {})["ticket"]
        return ticket

    def events(self, last_event_id: int | str | None = None, *, idle_timeout: float = 60.0,
               reconnects: int = 30, backoff: float = 0.25, max_backoff: float = 5.0) -> EventStream:
        """The seat's stream of Server-Sent Events (`GET /v1/matches/{id}/events`): `view` first (when
        `last_event_id` is None), then an `update` per change, `end` when the match is over. A drop, a silence
        of `idle_timeout` seconds or an `event: closed` connects again with `Last-Event-ID` (a gateway that
        cannot be reached: the client's next address, at once), waiting `backoff * 2**n` (jittered, at most
        `max_backoff`) once every address has failed; `reconnects` such waits in a row raise `StreamFailed`.
        An error answer raises its problem class."""
        return EventStream(self.client.gateways, f"/v1/matches/{self._match()}/events", self.credential,
                           last_event_id=last_event_id, idle_timeout=idle_timeout, reconnects=reconnects,
                           backoff=backoff, max_backoff=max_backoff)


# ------------------------------------------------------------------ the stream

@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One Server-Sent Event: `event` ("view", "update", "end", ...), `id` (the match's `seq` after it) and
    `data` (its JSON, or the raw text when it is not JSON). An event the server sends without an id (`presence`)
    has the id of the connection's last event before it, as in a browser's EventSource: the `seq` it follows."""

    event: str
    id: str | None
    data: Any

    @property
    def seq(self) -> int | None:
        """The id as the match's sequence number (None without a numeric id)."""
        try:
            return int(self.id) if self.id is not None else None
        except ValueError:
            return None


class _Dropped(Exception):
    """The connection ended, went silent or was dropped: connect again."""


class EventStream(Iterator[StreamEvent]):
    """An iterator of a stream's events across reconnections and gateways (`Seat.events()` makes one).

    Each connection goes to the gateway address in use (`Gateways.current`); one that cannot be reached moves
    the stream to the next address, at once, and when every one has failed it waits, backing off; `reconnects`
    such waits in a row raise `StreamFailed`. `last_event_id` is the id of the last event handed out (sent as
    `Last-Event-ID` on a reconnect, to whichever gateway: they share the store); `connections` counts the
    connections made. `drop()` closes the current connection as a failing network would (the next event comes
    from a new one); `close()` ends the iteration.
    """

    def __init__(self, gateways: Gateways, path: str, credential: str | None, *,
                 last_event_id: int | str | None = None, idle_timeout: float = 60.0, reconnects: int = 30,
                 backoff: float = 0.25, max_backoff: float = 5.0) -> None:
        self.gateways = gateways
        self._path = path
        self._credential = credential
        self.last_event_id: str | None = None if last_event_id is None else str(last_event_id)
        self.idle_timeout = idle_timeout
        self.connections = 0
        self.closed_reasons: list[str] = []     # the `reason` of each `event: closed` the server sent
        self._attempts = Attempts(gateways, reconnects, backoff, max_backoff)
        self._retry: float | None = None         # the server's `retry:` (seconds)
        self._http = httpx.Client(timeout=httpx.Timeout(idle_timeout, connect=min(idle_timeout, 10.0)))
        self._reply: httpx.Response | None = None
        self._events: Iterator[ServerSentEvent] | None = None
        self._address = gateways.current
        self._sock: socket.socket | None = None
        self._dropped = False
        self._done = False
        self._connected_at = 0.0

    def __repr__(self) -> str:
        return f"EventStream({self._path!r}, last_event_id={self.last_event_id!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Self:
        return self

    # -------------------------------------------------------- connections

    def _connect(self) -> None:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if self._credential is not None:
            headers["Authorization"] = f"Bearer {self._credential}"
        if self.last_event_id is not None:
            headers["Last-Event-ID"] = self.last_event_id
        address = self._address = self.gateways.current
        what = f"GET {address}{self._path}"
        self._dropped = False          # a drop() from now on ends this connection
        try:
            reply = self._http.send(self._http.build_request("GET", address + self._path, headers=headers),
                                    stream=True)
        except (httpx.HTTPError, httpx.InvalidURL, OSError) as err:
            raise transport_error(err, what, address) from err
        self.connections += 1
        if reply.status_code != 200:
            try:
                reply.read()
            except (httpx.HTTPError, OSError) as err:
                raise transport_error(err, what, address) from err
            finally:
                reply.close()
            raise problem_of(reply)
        stream = reply.extensions.get("network_stream")
        self._sock = stream.get_extra_info("socket") if stream is not None else None
        self._reply, self._connected_at = reply, time.monotonic()
        self._events = EventSource(reply).iter_sse()

    def _disconnect(self) -> None:
        reply, self._reply, self._events, self._sock = self._reply, None, None, None
        if reply is not None:
            try:
                reply.close()
            except (httpx.HTTPError, OSError):
                pass

    def drop(self) -> None:
        """Close the current connection as a failing network would (from any thread): whatever it still held
        unread is lost, and the next event is read from a new connection that resumes after `last_event_id`."""
        self._dropped = True
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)   # wakes a reader blocked on it
            except OSError:
                pass

    def close(self) -> None:
        """End the stream: no more events, no reconnection."""
        self._done = True
        self.drop()
        self._disconnect()
        self._http.close()

    # -------------------------------------------------------- events

    def _failed(self, error: Exception, *, at_least: float = 0.0, move_on: bool = True) -> None:
        """A failure in a row: wait before the next connection, or give up (`StreamFailed`)."""
        wait = self._attempts.after(error, self._address, move_on=move_on, at_least=at_least, base=self._retry)
        if wait is None:
            self.close()
            raise StreamFailed(f"GET {self._path}: {error} (every address failed, "
                               f"{self._attempts.waits + 1} times in a row)", self._address) from error
        time.sleep(wait)

    def __next__(self) -> StreamEvent:
        while not self._done:
            if self._reply is None:
                try:
                    self._connect()
                except (TransportError, ServerProblem, EngineBusy, TooManyStreams) as err:
                    if isinstance(err, ProblemError) and err.status not in (503, 429):
                        self.close()
                        raise
                    retry_after = err.retry_after if isinstance(err, ProblemError) else None
                    self._failed(err, at_least=retry_after or 0.0,
                                 move_on=not isinstance(err, ProblemError) or err.status == 503)
                    continue
            try:
                event = self._read_event()
            except _Dropped as err:
                self._disconnect()
                if self._done:
                    break
                if time.monotonic() - self._connected_at > HEALTHY_CONNECTION:
                    self._attempts.reset()    # it served a while (keep-alives while a person thinks): not in a row
                # the same address first (a restart, a blip): it moves on only when it cannot be reached
                self._failed(ConnectionLost(f"GET {self._address}{self._path}: {err}", self._address),
                             move_on=False)
                continue
            if event.event == "closed":       # the server ends the stream early: resume from where we are
                reason = str(event.data.get("reason") if isinstance(event.data, dict) else event.data)
                self.closed_reasons.append(reason)
                self._disconnect()
                if reason in QUIET_CLOSES:    # a stream that lasted its time: not a failure, however often
                    self._attempts.reset()
                    time.sleep(min(self._retry if self._retry is not None else self._attempts.backoff,
                                   self._attempts.max_backoff))
                    continue
                # shutting down, store unavailable: backed off, bounded; a gateway shutting down is left
                self._failed(ConnectionLost(f"GET {self._address}{self._path}: closed ({reason})", self._address),
                             move_on=reason == "shutdown")
                continue
            seq, seen = event.seq, _as_int(self.last_event_id)
            if event.event == "update" and seq is not None and seen is not None and seq <= seen:
                continue                      # a change already handed out (a server resending): never twice
            if event.id is not None:
                self.last_event_id = event.id
            self._attempts.reset()
            if event.event == "end":
                self.close()          # its connections too: nothing comes after the end
            return event
        raise StopIteration

    def _read_event(self) -> StreamEvent:
        """The next event of the current connection (comments, keep-alives and empty events skipped)."""
        events = self._events
        assert events is not None
        while True:
            if self._dropped:
                raise _Dropped("dropped")
            try:
                sse = next(events)
            except StopIteration:
                raise _Dropped("the server closed the stream") from None
            # a reset, a silence, a closed socket, a stream that is not one (httpx_sse.SSEError)
            except (httpx.HTTPError, httpx.StreamError, SSEError, OSError, ValueError, AttributeError) as err:
                raise _Dropped(f"{type(err).__name__}: {err}") from err
            if self._dropped:
                raise _Dropped("dropped")
            if sse.retry is not None:
                self._retry = sse.retry / 1000
            if not sse.data and sse.event == "message":
                continue                      # no event: a `retry:` alone, or the blank line after a keep-alive
            try:
                value: Any = json.loads(sse.data) if sse.data else None
            except ValueError:
                value = sse.data
            return StreamEvent(sse.event or "message", sse.id or None, value)


def _as_int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


# ------------------------------------------------------------------ the client's calls

class TablesApi:
    """The table calls of `RestClient` (a mix-in of it)."""

    def _client(self) -> RestClient:
        return cast("RestClient", self)

    def create_table(self, variant: str, players: int, *, seats: Sequence[str | Json] | None = None,
                     options: Json | None = None, public: bool = False, on_leave: OnLeave = "wait",
                     name: str | None = None, clock: Json | None = None, rated: bool | None = None,
                     spectators: bool | None = None, claim_after: int | None = None) -> OpenedTable:
        """Open a table (`POST /v1/tables`). `seats`: one per seat, "open" (a person's, the default for all) or
        a bot's level; `public` tables are listed in the lobby; `on_leave`: "wait" for someone to take a seat
        its person left, or "bot" to let a greedy bot play it; `clock`: a turn clock the service applies
        (`{"move": 30}` or `{"bank": 300, "increment": 5}`, and `on_timeout`: docs/tables.md, Clocks).
        `rated`: False for a casual table (engine help allowed, no rating; None: the gateway's default, rated);
        `spectators`: a private table anyone with its `spectator_link` may watch; `claim_after`: seconds a
        person's seat must be gone before the others may claim victory (None: the gateway's default)."""
        body: Json = {"variant": variant, "players": players, "public": public, "on_leave": on_leave}
        if rated is not None:
            body["rated"] = rated
        if spectators is not None:
            body["spectators"] = spectators
        if claim_after is not None:
            body["claim_after"] = claim_after
        if seats is not None:
            body["seats"] = [seat_spec(s) for s in seats]
        if options is not None:
            body["options"] = options
        if name is not None:
            body["name"] = name
        if clock is not None:
            body["clock"] = clock
        answer = self._client().request("POST", "/v1/tables", body)
        return OpenedTable(self._client(), answer["table_id"], answer["host_key"],
                           [Invite.from_json(i) for i in answer.get("invites", [])], Table.from_json(answer["table"]),
                           answer.get("spectator_link"))

    def list_tables(self, variant: str | None = None, *, limit: int = 20) -> Iterator[Table]:
        """The lobby: every public table with a seat free, newest first, page by page (`limit` a page,
        following `next_cursor` as the iteration goes on)."""
        cursor: str | None = None
        while True:
            query = {"limit": str(limit), **({"variant": variant} if variant else {}),
                     **({"cursor": cursor} if cursor else {})}
            page = self._client().request("GET", "/v1/tables?" + urllib.parse.urlencode(query))
            yield from (Table.from_json(t) for t in page.get("tables", []))
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def table(self, table_id: str, *, watch: str | None = None, invite: str | None = None,
              auth: str | None = None) -> Table:
        """A table by its id. A public table: anyone holding the id may look. A private one: its seats and host
        (`auth`: a credential or the host key), a spectator link's `watch` code (else `SpectatorsOff`), or an
        `invite` code while that invite is unused."""
        query = urllib.parse.urlencode({**({"watch": watch} if watch else {}), **({"invite": invite} if invite else {})})
        path = f"/v1/tables/{urllib.parse.quote(table_id, safe='')}" + (f"?{query}" if query else "")
        return Table.from_json(self._client().request("GET", path, auth=auth))

    def watch_events(self, match_id: str, watch: str | None = None, *, idle_timeout: float = 60.0,
                     reconnects: int = 30) -> EventStream:
        """A spectator's stream of a match (`GET /v1/matches/{id}/events`, no credential): the public view, then
        every change. A private table's needs its spectator link's `watch` code (else `SpectatorsOff`)."""
        path = f"/v1/matches/{urllib.parse.quote(match_id, safe='')}/events"
        if watch:
            path += "?" + urllib.parse.urlencode({"watch": watch})
        return EventStream(self._client().gateways, path, None, idle_timeout=idle_timeout, reconnects=reconnects)

    def join_table(self, table_id: str, invite: str | None = None, seat: int | None = None, *,
                   name: str = "Guest", player: str | None = None) -> Seat:
        """Take a seat: by an `invite` code, or on a public table by `seat` number; `name` is shown to the
        others; `player` a player assertion (docs/tables.md "Player ids"; None: a guest). Refusals:
        `InvalidInvite`, `InviteRequired`, `SeatTaken`, `SeatHeld`, `TableFull`, `MatchOver`, `UnknownTable`."""
        if (invite is None) == (seat is None):
            raise ValueError("join a table with an invite or (on a public table) a seat number: one of them")
        body: Json = {"name": name, **({"invite": invite} if invite is not None else {"seat": seat})}
        if player is not None:
            body["player"] = player
        answer = self._client().request("POST", f"/v1/tables/{urllib.parse.quote(table_id, safe='')}/join", body)
        return Seat(self._client(), answer["table_id"], answer["seat"], answer["credential"],
                    answer.get("player_id"), answer.get("match_id"))

    def join_link(self, link: str, *, name: str = "Guest", player: str | None = None) -> Seat:
        """Take the seat an invite link (`http://host:port/play?table=<id>&invite=<code>`) is for, at this
        client's gateway (`RestClient.for_link(link)` makes a client of the link's gateway)."""
        _, table_id, code = parse_invite_link(link)
        return self.join_table(table_id, invite=code, name=name, player=player)

    def seek(self, variant: str, players: int, *, name: str = "Guest", player: str | None = None,
             options: Json | None = None, clock: Json | None = None, rated: bool | None = None,
             bots_after: int | None = None, bots_level: str | None = None, party: bool | str | None = None,
             partner: Literal["bot"] | None = None) -> Seeked:
        """Quick play (`POST /v1/seek`, docs/tables.md "Quick play"): a seat at a waiting table of the variant,
        player count, `clock` and `rated`, or a new one (`bots_after`: seconds until its free seats become bots
        of `bots_level`; `options`: a new table's). As a pair (4 players of a variant with partnerships,
        "Seeking as a pair"): `party=True` keeps the seat opposite for a partner and answers its code in
        `Seeked.party`; the partner seeks with `party=<that code>` (and the same variant, players, clock and
        rated); `partner="bot"` seats a bot opposite. Refusals: `UnknownParty`, `PartyFull`, `Malformed` (a pair
        where there are no partners), `RateLimited`."""
        given: Json = {"name": name, "player": player, "options": options, "clock": clock, "rated": rated,
                       "bots_after": bots_after, "bots_level": bots_level, "party": party, "partner": partner}
        body: Json = {"variant": variant, "players": players, **{k: v for k, v in given.items() if v is not None}}
        answer = self._client().request("POST", "/v1/seek", body)
        seat = Seat(self._client(), answer["table_id"], answer["seat"], answer["credential"], answer.get("player_id"),
                    answer.get("match_id"))
        return Seeked(seat, bool(answer.get("opened")), Table.from_json(answer["table"]), answer.get("party"))

    def inbox(self, player: str | None = None, credentials: Sequence[str] = ()) -> Inbox:
        """A person's live games (docs/tables.md, "The inbox"): by `player`, the player assertion the host app
        signed (`GET /v1/inbox`), and/or by the `credentials` of a guest's seats (1 to 50: `POST /v1/inbox`),
        each game with whose turn it is, the clocks and the moves unseen. `Inbox.resume(game)` is the `Seat` of
        a game whose credential was sent; `Inbox.gone` the credentials that hold no seat any more (forget them).
        Refusals: `PlayerRequired` (neither), `InvalidPlayer` (an assertion that does not check)."""
        from clients.sdk.inbox import Inbox

        client = self._client()
        if credentials:
            answer = client.request("POST", "/v1/inbox", {"credentials": list(credentials)}, auth=player)
        else:
            answer = client.request("GET", "/v1/inbox", auth=player)
        return Inbox.from_json(answer, list(credentials), client)

    def notifications(self, player: str, after: str | None = None, *, limit: int = 100) -> NotificationPage:
        """What a player was told while away (`GET /v1/inbox/notifications`, by their player assertion): the
        notifications of their seats' matches after the cursor `after` (None: from the oldest kept), oldest
        first, at most `limit`; keep the page's `next` and ask after it next time."""
        from clients.sdk.inbox import NotificationPage

        query = urllib.parse.urlencode({"limit": str(limit), **({"after": after} if after else {})})
        return NotificationPage.from_json(self._client().request("GET", f"/v1/inbox/notifications?{query}",
                                                                 auth=player))

    def seat_for(self, table_id: str, credential: str) -> Seat:
        """A seat taken earlier (on this or another device), from its table id and credential alone: its
        current match and view are fetched (`Seat.state`)."""
        found = Seat(self._client(), table_id, None, credential)
        found.seat = found.view().get("seat")
        return found
