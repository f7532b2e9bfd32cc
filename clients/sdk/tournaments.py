"""Hosted tournaments (docs/tournaments.md): open one, join it by invite or from the lobby, start it with the host
key, follow its standings, and play each of your rounds as an ordinary table seat.

    api = RestClient("http://127.0.0.1:8080")
    opened = api.open_tournament(6, name="Friday")                  # Bykovo for six; opened.invites: one per place
    anna = api.join_tournament_link(opened.invites[0].link, name="Anna")
    ...                                                              # five more join
    opened.start()
    while (you := anna.next_round()).status not in ("out", "over"):
        if you.status == "playing":
            seat = anna.seat(you)                                    # a `clients.sdk.Seat` of this round's table
            ...                                                      # play it as any table's seat
    print(anna.tournament().standings)

A participant's tournament credential and the host key travel only in `Authorization: Bearer`, never in a URL
or a body, and are left out of every `repr`. The tournament's stream (`RestClient.tournament_events`) is an
`EventStream`: `tournament` events (the view, `id` its version) at each change, resumed with `Last-Event-ID`
after a drop or the server's `closed`, until `end`.
"""
from __future__ import annotations

import time
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from clients.sdk.tables import EventStream, Seat

if TYPE_CHECKING:
    from clients.sdk.rest import RestClient

__all__ = ["HostedTournament", "OpenedTournament", "Participant", "PlayedRound", "RoundNow", "Standing",
           "TournamentInvite", "TournamentsApi", "TournamentPerson", "You", "parse_tournament_link"]

Json = dict[str, Any]
Format = Literal["bykovo", "swiss"]
#: `You.status` values (docs/tournaments.md, "Playing a round").
Status = Literal["playing", "sitting-out", "waiting", "out", "over"]
#: Statuses after which a participant plays no more.
FINAL = frozenset({"out", "over"})


# ------------------------------------------------------------------ what the gateway answers

@dataclass(frozen=True, slots=True)
class TournamentPerson:
    """A participant as the tournament shows them: `index` (the tournament's order: the order of joining, which
    every round's seats follow), `name`, `player` id, `out` (their total reached the limit) and `left`."""

    index: int
    name: str
    player: str
    out: bool
    left: bool

    @classmethod
    def from_json(cls, data: Json) -> TournamentPerson:
        return cls(int(data["index"]), str(data.get("name", "")), str(data.get("player", "")),
                   bool(data.get("out")), bool(data.get("left")))


def _byes(data: Json) -> list[int]:
    """A Swiss round's `byes`; an answer that names only `bye` (one person) gives that one."""
    return list(data.get("byes") or ([] if data.get("bye") is None else [data["bye"]]))


@dataclass(frozen=True, slots=True)
class RoundNow:
    """The round being played: its `number`, `table_id` and `match_id` (None until dealt), the participants at
    seats 0-3 (`players`), and who is `sitting_out`. A Swiss round: `tables` (each `players` by seat), `byes` (who
    sits out, a bye worth a win) and `bye` (the first of them)."""

    number: int
    table_id: str | None
    match_id: str | None
    players: list[int]
    sitting_out: list[int]
    tables: list[Json] = field(default_factory=list)
    bye: int | None = None
    byes: list[int] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Json) -> RoundNow:
        return cls(int(data["number"]), data.get("table_id"), data.get("match_id"), list(data.get("players") or []),
                   list(data.get("sitting_out") or []), list(data.get("tables") or []), data.get("bye"),
                   _byes(data))


@dataclass(frozen=True, slots=True)
class PlayedRound:
    """A round recorded: its `players` by seat, `points` by seat, the `winner` seat, the sports `places` by seat,
    who it put out (`eliminated`) and who forfeited it (`forfeit`, or None); `table_id` and `match_id`. A Swiss
    round: its `tables` (each with its `players` and `result`) and `byes` (who sat out, a bye worth a win)."""

    number: int
    players: list[int]
    points: list[int]
    winner: int | None
    places: list[int]
    eliminated: list[int]
    forfeit: int | None
    table_id: str | None
    match_id: str | None
    tables: list[Json] = field(default_factory=list)
    byes: list[int] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Json) -> PlayedRound:
        return cls(int(data["number"]), list(data.get("players") or []), list(data.get("points") or []),
                   data.get("winner"), list(data.get("places") or []), list(data.get("eliminated") or []),
                   data.get("forfeit"), data.get("table_id"), data.get("match_id"), list(data.get("tables") or []),
                   _byes(data))


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of the standings, best first: the participant's `index` and `name` (`participant`), `place`,
    `total` (Bykovo: lower is better), `out`, `official` (the first three once it is over); a Swiss's `score`
    and `buchholz`."""

    index: int
    participant: str
    place: int
    total: int | None
    out: bool
    official: bool
    score: float | None = None
    buchholz: float | None = None

    @classmethod
    def from_json(cls, data: Json) -> Standing:
        return cls(int(data["index"]), str(data.get("participant", "")), int(data.get("place", 0)), data.get("total"),
                   bool(data.get("out")), bool(data.get("official")), data.get("score"), data.get("buchholz"))


@dataclass(frozen=True, slots=True)
class You:
    """Where a participant is now (`GET` with their credential): `status` (`playing`, `sitting-out`, `waiting`,
    `out`, `over`), the `round` it is about (None between rounds) and, while playing, the round's `table_id`,
    `match_id`, your `seat` and that seat's `credential` (a table credential: `Participant.seat` makes a `Seat`)."""

    index: int
    name: str
    player: str
    status: Status
    round: int | None
    left: bool = False
    table_id: str | None = None
    match_id: str | None = None
    seat: int | None = None
    credential: str | None = field(default=None, repr=False)

    @classmethod
    def from_json(cls, data: Json) -> You:
        return cls(int(data["index"]), str(data.get("name", "")), str(data.get("player", "")),
                   cast("Status", str(data["status"])), data.get("round"), bool(data.get("left")),
                   data.get("table_id"), data.get("match_id"), data.get("seat"), data.get("credential"))

    @property
    def playing(self) -> bool:
        return self.status == "playing" and self.credential is not None


@dataclass(frozen=True, slots=True)
class HostedTournament:
    """A hosted tournament as `GET /v1/tournaments/hosted/{id}` answers it (`raw`: the whole answer): `status`
    (`open`, `playing`, `over`), `version` (one more at every change), the `participants` in the tournament's
    order, the Bykovo `limit`, `first_sitters`, the `round` being played, the `rounds` recorded, the `standings`
    and, asked with a participant's credential, `you`."""

    tournament_id: str
    name: str | None
    format: str
    variant: str
    size: int
    status: str
    version: int | None
    participants: list[TournamentPerson]
    limit: int | None
    round: RoundNow | None
    rounds: list[PlayedRound]
    standings: list[Standing]
    archived: bool
    raw: Json = field(repr=False, compare=False)
    you: You | None = None

    @classmethod
    def from_json(cls, data: Json) -> HostedTournament:
        round_now, you = data.get("round"), data.get("you")
        return cls(str(data["tournament_id"]), data.get("name"), str(data.get("format", "bykovo")),
                   str(data.get("variant", "")), int(data.get("size", 0)), str(data.get("status", "")),
                   data.get("version"), [TournamentPerson.from_json(p) for p in data.get("participants") or []],
                   data.get("limit"), RoundNow.from_json(round_now) if round_now else None,
                   [PlayedRound.from_json(r) for r in data.get("rounds") or []],
                   [Standing.from_json(s) for s in data.get("standings") or []], bool(data.get("archived")), data,
                   You.from_json(you) if you else None)

    @property
    def over(self) -> bool:
        return self.status == "over"

    def name_of(self, index: int) -> str:
        """A participant's name by their index."""
        return next((p.name for p in self.participants if p.index == index), f"#{index}")


@dataclass(frozen=True, slots=True)
class TournamentInvite:
    """One invite to a place: its `code` (for `join_tournament`) and the page's `link`
    (`http://host:port/play?tournament=<id>&invite=<code>`, for a browser or `domino play --join LINK`)."""

    code: str
    link: str

    @classmethod
    def from_json(cls, data: Json) -> TournamentInvite:
        return cls(str(data["code"]), str(data.get("link", "")))


def parse_tournament_link(link: str) -> tuple[str, str, str | None]:
    """`(gateway_url, tournament_id, invite_code)` of a tournament's link (`http://host:port/play?tournament=<id>`
    with `&invite=<code>`, or without for a public one: None); a link that is not one raises `ValueError`."""
    parts = urllib.parse.urlsplit(link.strip())
    query = urllib.parse.parse_qs(parts.query)
    ids, codes = query.get("tournament", []), query.get("invite", [])
    if parts.scheme not in ("http", "https") or not parts.netloc or len(ids) != 1 or len(codes) > 1:
        raise ValueError(f"not a tournament's link (http://host:port/play?tournament=<id>&invite=<code>): {link!r}")
    base = parts.path.rsplit("/play", 1)[0] if parts.path.endswith("/play") else ""
    return f"{parts.scheme}://{parts.netloc}{base}", ids[0], codes[0] if codes else None


# ------------------------------------------------------------------ the host's and a participant's side

@dataclass(slots=True)
class OpenedTournament:
    """What opening a tournament answers: its id, the host key (answered once: keep it), one invite per place,
    and the tournament as it stands."""

    client: RestClient = field(repr=False)
    tournament_id: str
    host_key: str = field(repr=False)
    invites: list[TournamentInvite]
    tournament: HostedTournament

    def start(self) -> HostedTournament:
        """Start it (the host key): round 1 is seated and dealt. Refusals: `TournamentStarted`,
        `TooFewParticipants`, `IllegalAction` (someone joined or left meanwhile: start again)."""
        self.tournament = self.client.start_tournament(self.tournament_id, self.host_key)
        return self.tournament

    def refresh(self) -> HostedTournament:
        self.tournament = self.client.tournament(self.tournament_id)
        return self.tournament


class Participant:
    """A place taken in a tournament, held by its `credential` (a tournament credential: it is not a table's;
    each round's seat has its own, in `You.credential`). `index` is the place in the tournament's order."""

    def __init__(self, client: RestClient, tournament_id: str, index: int, credential: str,
                 player_id: str | None = None, tournament: HostedTournament | None = None) -> None:
        self.client = client
        self.tournament_id = tournament_id
        self.index = index
        self.credential = credential
        self.player_id = player_id
        self.joined = tournament

    def __repr__(self) -> str:    # never the credential
        return f"Participant(tournament_id={self.tournament_id!r}, index={self.index!r})"

    def tournament(self) -> HostedTournament:
        """The tournament now, with `you` (your status, and while playing your round's seat)."""
        return self.client.tournament(self.tournament_id, auth=self.credential)

    def you(self) -> You:
        found = self.tournament().you
        assert found is not None, "a participant's GET answers `you`"
        return found

    def leave(self) -> HostedTournament:
        """Leave: before the start the place is freed (the credential stops working); after it you forfeit (your
        round's seat resigns now, or at the next round you are seated in) and the tournament goes on."""
        answer = self.client.request("POST", f"{_path(self.tournament_id)}/leave", {}, auth=self.credential)
        return HostedTournament.from_json(answer["tournament"])

    def seat(self, you: You | None = None) -> Seat | None:
        """Your seat at this round's table as a `Seat` (`apply`, `legal`, `events` ... as at any table), from `you`
        (None: asked now); None when you are not playing now."""
        you = you or self.you()
        if not you.playing or you.table_id is None or you.credential is None:
            return None
        return Seat(self.client, you.table_id, you.seat, you.credential, self.player_id or you.player, you.match_id)

    def next_round(self, after: int | None = None, *, timeout: float = 600.0, poll: float = 0.5) -> You:
        """Wait until there is something for you after round `after` (None: anything now): a round you play
        (dealt), a round you sit out, or the end (`out`, `over`). `waiting` (the next round being seated) and the
        round `after` itself are waited out. `TimeoutError` after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            you = self.you()
            if you.status in FINAL:
                return you
            fresh = you.round is not None and (after is None or you.round > after)
            if fresh and (you.status == "sitting-out" or (you.playing and you.match_id is not None)):
                return you
            if time.monotonic() >= deadline:
                raise TimeoutError(f"tournament {self.tournament_id}: nothing new after round {after} within "
                                   f"{timeout} s (status {you.status})")
            time.sleep(poll)


def _path(tournament_id: str) -> str:
    return f"/v1/tournaments/hosted/{urllib.parse.quote(tournament_id, safe='')}"


# ------------------------------------------------------------------ the client's calls

class TournamentsApi:
    """The hosted tournament calls of `RestClient` (a mix-in of it)."""

    def _client(self) -> RestClient:
        return cast("RestClient", self)

    def open_tournament(self, size: int, *, format: Format = "bykovo", variant: str | None = None,
                        options: Json | None = None, rounds: int | None = None, name: str | None = None,
                        public: bool = False, rated: bool | None = None, clock: Json | None = None,
                        players: int | None = None) -> OpenedTournament:
        """Open a hosted tournament (`POST /v1/tournaments/hosted`): `size` places (Bykovo 4-7, a Swiss 2-64);
        a Swiss needs `variant` and `rounds`, and seats `players` (2, the default, or 4: tables of four grouped
        by standing) at each table; `public` lists it in the lobby (joined without an
        invite); `rated=False` a casual one; `clock` every round's turn clock (Bykovo: `{"move": 30,
        "on_timeout": "autopilot"}`). Refusals: `Malformed` (its `field` says which), `UnknownVariant`."""
        body: Json = {"size": size, "format": format, "public": public}
        for key, value in (("variant", variant), ("options", options), ("rounds", rounds), ("name", name),
                           ("rated", rated), ("clock", clock), ("players", players)):
            if value is not None:
                body[key] = value
        answer = self._client().request("POST", "/v1/tournaments/hosted", body)
        return OpenedTournament(self._client(), answer["tournament_id"], answer["host_key"],
                                [TournamentInvite.from_json(i) for i in answer.get("invites", [])],
                                HostedTournament.from_json(answer["tournament"]))

    def list_tournaments(self, limit: int = 20) -> list[HostedTournament]:
        """The lobby: the public tournaments still open for joining, newest first."""
        answer = self._client().request("GET", f"/v1/tournaments/hosted?limit={int(limit)}")
        return [HostedTournament.from_json(t) for t in answer.get("tournaments", [])]

    def tournament(self, tournament_id: str, *, auth: str | None = None) -> HostedTournament:
        """A tournament by its id; with a participant's credential (`auth`) its `you`. `UnknownTournament`."""
        return HostedTournament.from_json(self._client().request("GET", _path(tournament_id), auth=auth))

    def join_tournament(self, tournament_id: str, invite: str | None = None, *, name: str = "Guest",
                        player: str | None = None) -> Participant:
        """Take a place: by an `invite` code (a public tournament: none needed); `name` for the standings;
        `player` a player assertion (None: a guest). Refusals: `InviteRequired`, `InvalidInvite`,
        `TournamentFull`, `TournamentStarted`, `SeatHeld` (the same player twice), `UnknownTournament`."""
        body: Json = {"name": name}
        if invite is not None:
            body["invite"] = invite
        if player is not None:
            body["player"] = player
        answer = self._client().request("POST", f"{_path(tournament_id)}/join", body)
        return Participant(self._client(), answer["tournament_id"], int(answer["index"]), answer["credential"],
                           answer.get("player_id"), HostedTournament.from_json(answer["tournament"]))

    def join_tournament_link(self, link: str, *, name: str = "Guest", player: str | None = None) -> Participant:
        """Take the place a tournament's link is for (`http://host:port/play?tournament=<id>&invite=<code>`), at
        this client's gateway (`RestClient.for_tournament_link(link)` makes a client of the link's gateway)."""
        _, tournament_id, code = parse_tournament_link(link)
        return self.join_tournament(tournament_id, code, name=name, player=player)

    def participant(self, tournament_id: str, credential: str) -> Participant:
        """A place taken earlier (on this or another device), from the tournament id and its credential alone."""
        found = Participant(self._client(), tournament_id, -1, credential)
        you = found.you()
        found.index, found.player_id = you.index, you.player
        return found

    def start_tournament(self, tournament_id: str, host_key: str) -> HostedTournament:
        """The host starts it (`POST .../start`, the host key): round 1 is seated and dealt."""
        answer = self._client().request("POST", f"{_path(tournament_id)}/start", {}, auth=host_key)
        return HostedTournament.from_json(answer["tournament"])

    def tournament_events(self, tournament_id: str, last_event_id: int | str | None = None, *,
                          idle_timeout: float = 60.0, reconnects: int = 30) -> EventStream:
        """The tournament's stream (`GET .../events`, no credential): a `tournament` event (its `data` the view:
        `HostedTournament.from_json`, its `id` the version) first and at each change, `end` once it is over.
        A drop, a silence or the server's `closed` connects again with `Last-Event-ID`: no version twice."""
        return EventStream(self._client().gateways, f"{_path(tournament_id)}/events", None,
                           last_event_id=last_event_id, idle_timeout=idle_timeout, reconnects=reconnects)
