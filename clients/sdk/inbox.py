"""A person's inbox (docs/tables.md, "The inbox"): their live games, whose turn, the clocks, the moves unseen.

    api = RestClient("http://127.0.0.1:8080")
    mine = api.inbox(player=assertion)                    # a player the host app vouches for
    mine = api.inbox(credentials=[anna.credential, ...])  # a guest: the credentials it keeps
    for game in mine.games:                               # your turn first, then the latest active
        print(game.name or game.table_id, "your turn" if game.your_turn else "", game.unread)
    seat = mine.resume(mine.games[0])                     # a `Seat`, when its credential was sent
    told = api.notifications(assertion, after=kept_cursor)  # what the player was told while away

`Inbox.gone` names the credentials sent that hold no seat any more (the table expired, the seat was given up):
a client forgets them. A credential never leaves the `Authorization` header but here, in the body of
`POST /v1/inbox`, and is left out of every `repr`.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clients.sdk.tables import Seat, TableSeat

if TYPE_CHECKING:
    from clients.sdk.rest import RestClient

__all__ = ["Inbox", "InboxGame", "Notification", "NotificationPage"]

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class InboxGame:
    """One live game of the inbox, as its seat sees it: the table (`table_id`, `name`, `variant`, `players`),
    the `seat` held, `status` ("waiting" for people, or "playing"), the `match_id` (None before the deal) at
    version `seq`, the seat to act (`turn`, `your_turn`), the `clocks` as the seat's view shows them (None
    without a clock), `unread`: the other seats' moves since this seat's own last one (`unread_more`: counted
    over the match's last 64 changes only), `active` (unix seconds), and each seat with its presence.
    `credential` is the credential sent for this seat (None for a game found by the player assertion)."""

    table_id: str
    name: str | None
    variant: str
    players: int
    seat: int
    status: str
    match_id: str | None
    seq: int | None
    turn: int | None
    your_turn: bool
    clocks: Json | None
    unread: int
    unread_more: bool
    active: float
    seats: list[TableSeat]
    credential: str | None = field(default=None, repr=False)

    @classmethod
    def from_json(cls, data: Json, credential: str | None = None) -> InboxGame:
        seats = [TableSeat.from_json(s) for s in data.get("seats", [])]
        return cls(data["table_id"], data.get("name"), data["variant"], data["players"], data["seat"],
                   data["status"], data.get("match_id"), data.get("seq"), data.get("turn"), bool(data["your_turn"]),
                   data.get("clocks"), int(data["unread"]), bool(data.get("unread_more")), float(data["active"]),
                   seats, credential)

    def time_left(self, seat: int | None = None) -> float | None:
        """Seconds left on `seat`'s clock (default: this game's seat) as of the latest change; None: no clock."""
        if not self.clocks:
            return None
        remaining = self.clocks.get("remaining") or []
        who = self.seat if seat is None else seat
        return float(remaining[who]) if who < len(remaining) else None


@dataclass(frozen=True, slots=True)
class Inbox:
    """What `RestClient.inbox` answered: the `player_id` the assertion proved (None: credentials only), the
    live `games` (your turn first, then the latest active; at most 100), and `gone`: the credentials sent that
    hold no seat any more."""

    player_id: str | None
    games: list[InboxGame]
    gone: list[str] = field(default_factory=list, repr=False)
    client: RestClient | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Json, credentials: Sequence[str] = (), client: RestClient | None = None) -> Inbox:
        sent = {_seat_key(c): c for c in credentials}
        games = [InboxGame.from_json(g, sent.get((g["table_id"], g["seat"]))) for g in data.get("games", [])]
        return cls(data.get("player_id"), games, [credentials[i] for i in data.get("gone", [])], client)

    @property
    def your_turn(self) -> list[InboxGame]:
        return [g for g in self.games if g.your_turn]

    def resume(self, game: InboxGame, credential: str | None = None) -> Seat:
        """The `Seat` of `game`, played by its credential (the one sent for it, else `credential`): a
        `LookupError` without one (a game found by the assertion, joined on another device)."""
        found = credential or game.credential
        if found is None:
            raise LookupError(f"no credential for seat {game.seat} of table {game.table_id}: it was taken on another "
                              "device (send its credential, or resume it there)")
        if self.client is None:
            raise LookupError("this inbox was made without a client")
        return Seat(self.client, game.table_id, game.seat, found, self.player_id, game.match_id)


@dataclass(frozen=True, slots=True)
class Notification:
    """One item of a player's notification feed (`GET /v1/inbox/notifications`, docs/notifications.md): its
    cursor `id`, `type` (your-turn, match-over, table-dealt, invite-taken, resigned, aborted, gone), when it was
    told (`created`, unix seconds), the `table_id`, `match_id` and the player's `seat`, and `data` (`seq`,
    `result`, `by`, `taken`)."""

    id: str
    type: str
    created: float
    table_id: str
    match_id: str | None
    seat: int
    data: Json

    @classmethod
    def from_json(cls, data: Json) -> Notification:
        return cls(str(data["id"]), str(data["type"]), float(data["created"]), str(data["table_id"]),
                   data.get("match_id"), int(data["seat"]), dict(data.get("data") or {}))


@dataclass(frozen=True, slots=True)
class NotificationPage:
    """A page of the feed: `items` oldest first, `next` the cursor to ask after next time, `more` whether more
    items were there than the page's limit."""

    player_id: str
    items: list[Notification]
    next: str | None
    more: bool

    @classmethod
    def from_json(cls, data: Json) -> NotificationPage:
        return cls(str(data["player_id"]), [Notification.from_json(i) for i in data.get("items", [])],
                   data.get("next"), bool(data.get("more")))


def _seat_key(credential: str) -> tuple[str, int] | None:
    """The table and seat a credential names (``<table id>.<seat>.<secret>``)."""
    table_id, _, rest = credential.partition(".")
    seat, _, _ = rest.partition(".")
    return (table_id, int(seat)) if seat.isdigit() else None
