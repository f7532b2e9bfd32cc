"""The SDK's hosted tournaments (clients/sdk/tournaments.py, docs/sdk.md) against a real gunicorn gateway and engine:
six people, each a program of its own using only the SDK (a thread each: join by the invite link, wait for its
round, play its seat by the seat's stream, sit out, until out or over), play a whole Bykovo micro-tournament; each
round's players, seats and sit-outs as the people were told them, each elimination and the final places are
checked against the independent reading of RULES.md B in test_hosted_tournament (`Sheet`, `Play`), the round
points taken from what the people's streams said (`round_ended`). The stream of standings resumes with
Last-Event-ID after a drop; the refusals are typed errors."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from clients.sdk import HostedTournament, Participant, RestClient, Seat, You, parse_tournament_link
from clients.sdk.errors import (
    IllegalAction,
    InvalidCredential,
    InviteRequired,
    MatchOver,
    SealedForbidden,
    TooFewParticipants,
    TournamentFull,
    TournamentStarted,
    UnknownTournament,
)

from .conftest import Gateway, player_assertion
from .test_hosted_tournament import Person, Play, Sheet, first_move, tour_gw  # noqa: F401

pytestmark = pytest.mark.service

Json = dict[str, Any]


@dataclass
class Told:
    """What the people were told and saw, round by round (shared by their threads)."""

    #: round -> {participant: seat} of those told they play it
    seats: dict[int, dict[int, int]] = field(default_factory=dict)
    #: round -> participants told they sit it out
    sitting_out: dict[int, set[int]] = field(default_factory=dict)
    #: round -> (points, winner) as a round's match said it (its `round_ended` event)
    ended: dict[int, tuple[list[int], int]] = field(default_factory=dict)
    #: participant -> their last status (out, over)
    final: dict[int, str] = field(default_factory=dict)
    errors: list[BaseException] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def seated(self, you: You) -> None:
        assert you.round is not None and you.seat is not None
        with self.lock:
            self.seats.setdefault(you.round, {})[you.index] = you.seat

    def sat_out(self, you: You) -> None:
        assert you.round is not None
        with self.lock:
            self.sitting_out.setdefault(you.round, set()).add(you.index)

    def saw(self, number: int, events: list[Json]) -> None:
        for event in events:
            if event.get("type") == "round_ended":
                with self.lock:
                    self.ended.setdefault(number, (event["record"]["round_points"], event["record"]["winner"]))


def play_round(seat: Seat, number: int, told: Told) -> None:
    """One round at its table, as a person with the SDK plays it: follow the seat's stream, and on this seat's
    turn play its first legal move that is not a pass; until the stream ends (the tournament closes the match
    once the round is over)."""
    with seat.events(idle_timeout=30) as stream:
        for event in stream:
            if event.event == "end":
                return
            data = event.data if isinstance(event.data, dict) else {}
            told.saw(number, data.get("events", []))
            view = data.get("view") or {}
            if view.get("to_move") != seat.seat or view.get("round_over") or view.get("match_over"):
                continue
            try:
                actions = seat.legal().actions
                if actions:
                    told.saw(number, seat.apply(first_move(actions)).get("events", []))
            except (IllegalAction, MatchOver):
                continue        # the round was closed meanwhile: the stream ends next


def sdk_person(participant: Participant, told: Told, until: float) -> Callable[[], None]:
    """A person's whole tournament with the SDK: wait for something after the last round, play it or sit it out."""
    def run() -> None:
        try:
            after: int | None = None
            while True:
                you = participant.next_round(after, timeout=max(1.0, until - time.monotonic()), poll=0.1)
                if you.status in ("out", "over"):
                    told.final[participant.index] = you.status
                    return
                after = you.round
                if you.status == "sitting-out":
                    told.sat_out(you)
                    continue
                seat = participant.seat(you)
                assert seat is not None and seat.seat == you.seat and seat.match_id == you.match_id
                told.seated(you)
                assert after is not None
                play_round(seat, after, told)
        except BaseException as err:  # noqa: BLE001 - handed to the test's thread
            told.errors.append(err)
    return run


class Checker:
    """The test's own eye on the tournament (no credential): every round recorded is checked, in order, against
    the independent reading of RULES.md B (`Sheet`): its players (the round's four, whoever sat out playing, the
    worst places) and seats, what the SDK people were told (their seat, or that they sit out), its points as the
    round's match ended it (the people's streams), who it put out. `step()` looks once: the final view once it
    is over and every round is checked, else None."""

    def __init__(self, gw: Gateway, tid: str, people: list[Person], told: Told) -> None:
        self.told = told
        self.play = Play(gw, tid, people, ended=told.ended)   # the points as the people's streams said them

    def step(self) -> Json | None:
        play, told = self.play, self.told
        assert not told.errors, told.errors
        view = play.view()
        if play.sheet is None and view["status"] in ("playing", "over"):
            play.sheet = Sheet(len(play.people), view["first_sitters"])
            assert view["limit"] == play.sheet.limit
        if play.sheet is None:
            return None
        rounds = view["rounds"]
        ready = len(play.sheet.played)
        while ready < len(rounds) and (rounds[ready]["forfeit"] is not None or rounds[ready]["number"] in told.ended):
            ready += 1
        for k in range(len(play.sheet.played), ready):
            check_told(play.sheet, rounds[k], told)
            play.catch_up({**view, "rounds": rounds[:k + 1]})
        return view if view["status"] == "over" and ready == len(rounds) else None


def follow_and_check(gw: Gateway, tid: str, people: list[Person], told: Told, deadline: float,
                     alive: Callable[[], bool] = lambda: True) -> tuple[Play, Json]:
    """`Checker.step()` until the tournament is over; `alive`: the people's clients still run (else stop)."""
    checker = Checker(gw, tid, people, told)
    until = time.monotonic() + deadline
    while time.monotonic() < until:
        final = checker.step()
        if final is not None:
            return checker.play, final
        if not alive():
            raise AssertionError(f"the people stopped before the end: {told.errors or told.final}")
        time.sleep(0.05)
    raise AssertionError(f"the tournament did not end within {deadline} s")


def check_told(sheet: Sheet, played: Json, told: Told) -> None:
    """A round about to be recorded in `sheet`: its four as the rules say, and what the people were told."""
    sheet.check_players(played["players"])
    number = played["number"]
    with told.lock:
        seats = dict(told.seats.get(number, {}))
        out = set(told.sitting_out.get(number, set()))
    # everyone told they play it sits where the round says; everyone told they sit out is not at its table
    assert all(played["players"][seat] == who for who, seat in seats.items()), (number, seats, played)
    assert out <= set(sheet.remaining()) - set(played["players"]), (number, out, played)


def test_six_people_with_the_sdk_play_a_whole_bykovo_tournament(tour_gw: Gateway) -> None:  # noqa: F811
    gw = tour_gw
    api = RestClient(gw.url)
    opened = api.open_tournament(6, name="SDK Friday")
    assert len(opened.invites) == 6 and opened.tournament.status == "open"
    assert parse_tournament_link(opened.invites[0].link) == (gw.url, opened.tournament_id, opened.invites[0].code)
    assert parse_tournament_link(f"{gw.url}/play?tournament={opened.tournament_id}") == (gw.url, opened.tournament_id,
                                                                                       None)
    with pytest.raises(ValueError):
        parse_tournament_link(f"{gw.url}/play?table={opened.tournament_id}&invite=ABC")   # a table's invite
    names = ["Anna", "Boris", "Cyril", "Dasha", "Egor", "Fedya"]
    participants = []
    for invite, name in zip(opened.invites, names, strict=True):
        client = RestClient.for_tournament_link(invite.link)
        participants.append(client.join_tournament_link(invite.link, name=name,
                                                        player=player_assertion(f"sdk-{name}-{opened.tournament_id[:8]}")))
    assert [p.index for p in participants] == list(range(6))
    assert "credential" not in repr(participants[0]) and participants[0].credential not in repr(participants[0])
    with pytest.raises(SealedForbidden):
        api.start_tournament(opened.tournament_id, participants[0].credential)
    started = opened.start()
    assert started.status == "playing" and started.limit == 60
    with pytest.raises(TournamentStarted):
        opened.start()
    told = Told()
    began = time.monotonic()
    threads = [threading.Thread(target=sdk_person(p, told, began + 150), daemon=True) for p in participants]
    for thread in threads:
        thread.start()
    people = [Person(n, p.credential, p.index, p.player_id or "") for n, p in zip(names, participants, strict=True)]
    play, final = follow_and_check(gw, opened.tournament_id, people, told, 150,
                                   alive=lambda: any(t.is_alive() for t in threads))
    for thread in threads:
        thread.join(30)
    assert not told.errors, told.errors
    sheet = play.sheet
    assert sheet is not None and sheet.over
    order = [s["index"] for s in final["standings"]]
    sheet.check_standings(order)
    # every round: each of its four was told their seat, each who sat it out was told so
    for played in final["rounds"]:
        assert told.seats[played["number"]] == {p: s for s, p in enumerate(played["players"])}, played
        expected_out = [p for p in range(6) if p not in played["players"] and
                        all(p not in g for g in sheet.gone[:played["number"] - 1])]
        assert sorted(told.sitting_out.get(played["number"], set())) == expected_out
    # the end as each person's client sees it: out, or over (the last three)
    assert {i for i, s in told.final.items() if s == "over"} >= set(sheet.remaining())
    seen: HostedTournament = participants[order[0]].tournament()
    assert seen.over and seen.you is not None and seen.you.status == "over"
    assert [s.index for s in seen.standings] == order and [s.official for s in seen.standings] == [True] * 3 + [False] * 3
    print(f"six SDK people, {len(final['rounds'])} rounds in {time.monotonic() - began:.1f} s")


def test_the_stream_of_standings_resumes_and_the_refusals_are_typed(tour_gw: Gateway) -> None:  # noqa: F811
    """The tournament's stream with the SDK: every version once and in order across a dropped connection (resumed
    with Last-Event-ID), to `end`; the lobby; a place taken on another device; the refusals as their classes."""
    api = RestClient(tour_gw.url)
    opened = api.open_tournament(4, public=True, name="Open SDK", rated=False)
    tid = opened.tournament_id
    assert tid in [t.tournament_id for t in api.list_tournaments(100)]
    with pytest.raises(UnknownTournament):
        api.tournament("0" * 32)
    private = api.open_tournament(4)
    with pytest.raises(InviteRequired):
        api.join_tournament(private.tournament_id, name="Nobody")
    stream = api.tournament_events(tid)
    first = next(stream)
    assert first.event == "tournament" and HostedTournament.from_json(first.data).status == "open"
    people = [api.join_tournament(tid, name=f"P{i}") for i in range(3)]
    with pytest.raises(TooFewParticipants):
        opened.start()
    people.append(api.join_tournament(tid, name="P3"))
    with pytest.raises(TournamentFull):
        api.join_tournament(tid, name="P4")
    again = api.participant(tid, people[2].credential)       # the same place, from its credential alone
    assert again.index == 2 and again.player_id == people[2].player_id
    opened.start()
    stream.drop()                                             # a network that fails mid-stream
    told = Told()
    threads = [threading.Thread(target=sdk_person(p, told, time.monotonic() + 120), daemon=True) for p in people]
    for thread in threads:
        thread.start()
    versions = [int(first.id or 0)]
    last: HostedTournament | None = None
    for event in stream:
        if event.event == "tournament":
            versions.append(int(event.id or 0))
            last = HostedTournament.from_json(event.data)
    for thread in threads:
        thread.join(30)
    assert not told.errors, told.errors
    assert stream.connections >= 2 and versions == sorted(set(versions)), versions
    assert last is not None and last.over and len(last.standings) == 4
    with pytest.raises(IllegalAction):
        people[0].leave()
    fresh = api.open_tournament(4, public=True)
    gone = api.join_tournament(fresh.tournament_id, name="Leaver")
    gone.leave()                                              # before the start: the place is freed
    with pytest.raises(InvalidCredential):
        gone.tournament()
