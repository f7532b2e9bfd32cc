"""The Python SDK of the domino engine (docs/sdk.md).

- `RestClient`: the REST gateway, transparent (`Match`) and sealed (`SealedMatch`)
  mode, computer opponents (`Bot`), problem details raised as typed exceptions
  (`clients.sdk.errors`), no answer as a typed `TransportError`, retries on 503, timeouts,
  and several gateway addresses a client fails over between (`clients.sdk.gateways`).
- Online tables (`clients.sdk.tables`): `RestClient.create_table`, `list_tables`, `table`,
  `join_table` -> `Seat`, a seat played by its credential alone, whose `events()` iterates
  its stream of Server-Sent Events and resumes after a drop; `RestClient.inbox` a person's live games
  (`clients.sdk.inbox`).
- Hosted tournaments (`clients.sdk.tournaments`): `RestClient.open_tournament`, `list_tournaments`,
  `tournament`, `join_tournament` -> `Participant`, whose `next_round()` says where they are now (`You`) and
  whose `seat()` is the round's table `Seat`; `tournament_events` the stream of standings.
- `EngineClient`, `TypedEngine`: the gRPC engine, JSON face and typed face
  (`clients.sdk.grpc_client`; imported on first use, so the REST client needs no gRPC).
"""
from __future__ import annotations

from typing import Any

from clients.sdk import errors
from clients.sdk.errors import (
    AnswerTimeout,
    ClientProblem,
    ConnectionLost,
    IllegalAction,
    Malformed,
    ProblemError,
    SealedForbidden,
    ServerProblem,
    StaleToken,
    StreamFailed,
    TransportError,
    Unreachable,
    UnreadableAnswer,
    ValidationFailed,
)
from clients.sdk.gateways import Gateways, Retrying
from clients.sdk.inbox import Inbox, InboxGame
from clients.sdk.rest import LEVELS, Bot, Legal, Match, ReplayResult, RestClient, SealedMatch
from clients.sdk.tables import (
    EventStream,
    Invite,
    OpenedTable,
    Seat,
    Seeked,
    StreamEvent,
    Table,
    TableSeat,
    parse_invite_link,
)
from clients.sdk.tournaments import (
    HostedTournament,
    OpenedTournament,
    Participant,
    PlayedRound,
    RoundNow,
    Standing,
    TournamentInvite,
    TournamentPerson,
    You,
    parse_tournament_link,
)

__all__ = [
    "LEVELS", "AnswerTimeout", "Bot", "ClientProblem", "ConnectionLost", "Gateways", "Retrying", "StreamFailed",
    "Unreachable", "UnreadableAnswer", "EngineClient", "EventStream", "IllegalAction", "Invite", "Legal", "Malformed",
    "Match", "OpenedTable", "ProblemError", "ReplayResult", "RestClient", "SealedForbidden", "SealedMatch", "Seat", "Seeked",
    "ServerProblem", "StaleToken", "StreamEvent", "Table", "TableSeat", "TransportError", "TypedEngine",
    "ValidationFailed", "errors", "parse_invite_link", "Inbox", "InboxGame", "HostedTournament", "OpenedTournament",
    "Participant", "PlayedRound", "RoundNow", "Standing", "TournamentInvite", "TournamentPerson", "You",
    "parse_tournament_link",
]


def __getattr__(name: str) -> Any:
    if name in ("EngineClient", "TypedEngine"):
        from clients.sdk import grpc_client

        return getattr(grpc_client, name)
    raise AttributeError(name)
