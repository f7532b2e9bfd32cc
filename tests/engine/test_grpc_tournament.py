"""The micro-tournament RPCs against a real engine process; the rules library is the reference.

CreateTournament, RecordTournamentRound and TournamentStandings on both faces,
their error mapping (INVALID_ARGUMENT for what cannot be understood,
FAILED_PRECONDITION for a round after the end, never INTERNAL for a damaged
state), the typed face's codec (`tournament_codec`, checked against
`proto_oracle`), the client (JSON face) and the call metrics.
"""
from __future__ import annotations

import copy
import random
from typing import Any

import grpc
import orjson
import proto_oracle as po
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from clients.engine_client import EngineClient
from engine_service.edge import tournament_codec
from engine_service.rules import IllegalActionError, MalformedError, Tournament

Stub = engine_pb2_grpc.EngineStub
IA = grpc.StatusCode.INVALID_ARGUMENT
FP = grpc.StatusCode.FAILED_PRECONDITION
FIVE = ["Ann", "Bob", "Cid", "Dan", "Eve"]
service = pytest.mark.service


def refused(call: Any, request: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call(request, timeout=10)
    return info.value


def create(stub: Stub, participants: list[str] = FIVE, seed: int = 3, rating: list[str] = ()) -> pb.TournamentState:
    request = pb.CreateTournamentRequest(participants=participants, seed=seed, rating=list(rating))
    return stub.CreateTournament(request, timeout=10).state


def record(stub: Stub, state: pb.TournamentState, points: list[int], winner: int) -> pb.TournamentResponse:
    return stub.RecordTournamentRound(
        pb.RecordTournamentRoundRequest(state=state, points=points, winner=winner), timeout=10)


def finished(participants: list[str], seed: int) -> Tournament:
    """A tournament played to the end with seeded random points."""
    t = Tournament.create(participants, seed=seed)
    rng = random.Random(seed)
    while not t.over:
        winner = rng.randrange(4)
        t.record_round([0 if s == winner else rng.randrange(0, 45) for s in range(4)], winner)
    return t


# ---------------------------------------------------------------- the codec (no process)


def test_dump_writes_every_key_of_the_library_state_and_load_reads_it_back() -> None:
    """dump writes the library's state field for field (the oracle reads it back) and load reads it again."""
    t = finished(FIVE, 5)
    t_state = t.to_dict()
    assert po.tournament_dict(tournament_codec.dump(t)) == t_state
    assert tournament_codec.dump(t) == po.tournament_msg(t_state)
    assert tournament_codec.load(po.tournament_msg(t_state)).to_dict() == t_state
    assert tournament_codec.standings_to_proto(t.standings()) == list(tournament_codec.dump(t).standings)
    assert po.standings_list(tournament_codec.standings_to_proto(t.standings())) == t.standings()


def test_codec_events_are_the_library_events() -> None:
    """Tournament events as messages say what the library's events say; unknown kinds are a bug (KeyError)."""
    t = Tournament.create(["Ann", "Bob", "Cid", "Dan"], seed=1)
    events = t.record_round([0, 100, 10, 10], 0)
    assert [e["type"] for e in events] == ["tournament_round", "eliminated", "tournament_over"]
    assert [po.tournament_event_dict(e) for e in tournament_codec.events_to_proto(events)] == events
    with pytest.raises(KeyError, match="exploded"):
        tournament_codec.events_to_proto([{"type": "exploded"}])


def test_load_needs_no_derived_keys() -> None:
    """The derived fields of a TournamentState are ignored on input: load recomputes them."""
    t = Tournament.create(FIVE, seed=4)
    t.record_round([0, 10, 20, 30], 0)
    full = t.to_dict()
    bare = {"participants": full["participants"], "seed": full["seed"], "first_sitters": full["first_sitters"],
            "rounds": [{k: r[k] for k in ("players", "places", "totals")} for r in full["rounds"]]}
    assert tournament_codec.load(po.tournament_msg(bare)).to_dict() == full


def test_load_prefixes_the_rules_refusal_with_state() -> None:
    """A tampered TournamentState is refused with the rules' message after "state: "."""
    t = Tournament.create(FIVE, seed=4)
    t.record_round([0, 10, 20, 30], 0)
    msg = tournament_codec.dump(t)
    msg.rounds[0].places[1], msg.rounds[0].places[2] = msg.rounds[0].places[2], msg.rounds[0].places[1]
    with pytest.raises(MalformedError, match=r"^state: rounds\[0\]: places or totals disagree with the points$"):
        tournament_codec.load(msg)


# ---------------------------------------------------------------- every RPC


@service
def test_create_is_the_library_tournament(stub: Stub) -> None:
    """CreateTournament answers the library's tournament, with or without a rating."""
    reply = stub.CreateTournament(pb.CreateTournamentRequest(participants=FIVE, seed=3, rating=["Eve"]), timeout=10)
    assert po.tournament_dict(reply.state) == Tournament.create(FIVE, 3, ["Eve"]).to_dict()
    assert list(reply.state.first_sitters) == [4] and list(reply.state.next_players) == [0, 1, 2, 3]
    assert reply.state.limit == 75 and len(reply.events) == 0
    by_lot = create(stub, seed=9)
    assert po.tournament_dict(by_lot) == Tournament.create(FIVE, 9).to_dict()


@service
def test_create_without_a_seed_records_a_random_one(stub: Stub) -> None:
    """Without a seed the engine draws one and records it: replaying it gives the same state."""
    first = stub.CreateTournament(pb.CreateTournamentRequest(participants=FIVE), timeout=10).state
    second = stub.CreateTournament(pb.CreateTournamentRequest(participants=FIVE), timeout=10).state
    assert first.seed != second.seed
    assert create(stub, seed=first.seed) == first


@service
def test_rounds_and_standings_follow_the_library_to_the_end(stub: Stub) -> None:
    """A 7-player tournament to its end: every round's events, state and standings are the library's."""
    seven = FIVE + ["Fay", "Gus"]
    reference = finished(seven, 21)
    library = Tournament.create(seven, seed=21)
    state = create(stub, seven, seed=21)
    for number, r in enumerate(reference.to_dict()["rounds"], 1):
        points = [r["totals"][p] - (library.totals[p]) for p in r["players"]]
        winner = r["places"].index(1)
        reply = record(stub, state, points, winner)
        events = library.record_round(points, winner)
        assert [po.tournament_event_dict(e) for e in reply.events] == events
        assert events[0]["number"] == number
        state = reply.state
        assert po.tournament_dict(state) == library.to_dict()
        standings = stub.TournamentStandings(pb.TournamentStateRequest(state=state), timeout=10)
        assert po.standings_list(standings.standings) == library.standings()
        assert standings.over == library.over
        assert list(standings.next_players) == ([] if library.over else library.next_players())
    assert state.over and library.to_dict() == reference.to_dict()
    assert [s.official for s in state.standings] == [True] * 3 + [False] * 4


# ---------------------------------------------------------------- errors


@service
@pytest.mark.parametrize(("participants", "rating", "words"), [
    (["Ann", "Bob", "Cid"], [], "4 to 7"),
    (FIVE + ["Fay", "Gus", "Hal"], [], "4 to 7"),
    (["Ann", "Bob", "Ann", "Dan"], [], "twice"),
    (["Ann", "", "Cid", "Dan"], [], "non-empty"),
    (FIVE, ["Zed"], "rating"),
])
def test_bad_creations_are_invalid_argument(stub: Stub, participants: list[str], rating: list[str],
                                            words: str) -> None:
    """Too few or many, repeated or empty names, an unknown rating: INVALID_ARGUMENT naming it."""
    err = refused(stub.CreateTournament, pb.CreateTournamentRequest(participants=participants, rating=rating))
    assert err.code() == IA and words in err.details()


@service
@pytest.mark.parametrize(("points", "winner", "words"), [
    ([0, 10, 20], 0, "4 round points"),
    ([0, 10, 20, 30, 40], 0, "4 round points"),
    ([0, -1, 20, 30], 0, "4 round points"),
    ([10, 0, 20, 30], 0, "scores 0"),
    ([0, 10, 20, 30], 4, "seat 0..3"),
])
def test_bad_rounds_are_invalid_argument(stub: Stub, points: list[int], winner: int, words: str) -> None:
    """Wrong number of points, a winner that did not score 0, a seat beyond 3: INVALID_ARGUMENT."""
    err = refused(stub.RecordTournamentRound,
                  pb.RecordTournamentRoundRequest(state=create(stub), points=points, winner=winner))
    assert err.code() == IA and words in err.details()


@service
def test_state_and_winner_are_required(stub: Stub) -> None:
    """An absent state or winner is refused by name."""
    err = refused(stub.RecordTournamentRound, pb.RecordTournamentRoundRequest(points=[0, 1, 2, 3], winner=0))
    assert err.code() == IA and err.details().startswith("state: required")
    err = refused(stub.RecordTournamentRound, pb.RecordTournamentRoundRequest(state=create(stub), points=[0, 1, 2, 3]))
    assert err.code() == IA and err.details().startswith("winner: required")
    err = refused(stub.TournamentStandings, pb.TournamentStateRequest())
    assert err.code() == IA and err.details().startswith("state: required")


@service
def test_recording_after_the_end_is_failed_precondition(stub: Stub) -> None:
    """A round after the end is FAILED_PRECONDITION; the standings of the finished tournament still answer."""
    state = record(stub, create(stub, ["Ann", "Bob", "Cid", "Dan"]), [0, 100, 0, 0], 0).state
    assert state.over and list(state.next_players) == []
    err = refused(stub.RecordTournamentRound, pb.RecordTournamentRoundRequest(state=state, points=[0, 1, 2, 3],
                                                                             winner=0))
    assert err.code() == FP and "over" in err.details()
    standings = stub.TournamentStandings(pb.TournamentStateRequest(state=state), timeout=10)
    assert standings.over and list(standings.next_players) == []
    assert [s.participant for s in standings.standings] == ["Ann", "Cid", "Dan", "Bob"]


@service
@pytest.mark.parametrize(("patch", "prefix"), [
    ({"seed": -1}, "state: seed"),
    ({"seed": None}, "state: seed"),
    ({"participants": ["Ann", 3, "Cid", "Dan", "Eve"]}, "state: participants"),
    ({"first_sitters": [True]}, "state: first_sitters"),
    ({"rounds": "x"}, "state: rounds must be a list"),
    ({"rounds": [{"players": [0, 1, 2, 3], "places": [1, 2, 3, 4], "totals": [1, "x"]}]}, "state: rounds[0]"),
])
def test_the_json_face_names_the_bad_field_of_a_state(json_stub: engine_pb2_grpc.JsonEngineStub,
                                                      patch: dict[str, Any], prefix: str) -> None:
    """A JSON tournament state is read by the rules; their refusal names the key, after "state: "."""
    state = {**Tournament.create(FIVE, seed=1).to_dict(), **patch}
    for method, args in ((json_stub.TournamentStandings, {"state": state}),
                         (json_stub.RecordTournamentRound, {"state": state, "points": [0, 1, 2, 3], "winner": 0})):
        err = refused(method, pb.JsonCall(args=orjson.dumps(args)))
        assert err.code() == IA and err.details().startswith(prefix), err.details()


def _played(stub: Stub) -> pb.TournamentState:
    state = create(stub, FIVE + ["Fay"], seed=8)
    for points in ([0, 10, 20, 30], [0, 5, 5, 40]):
        state = record(stub, state, points, 0).state
    return state


@service
@pytest.mark.parametrize(("damage", "words"), [
    (lambda s: s.rounds[0].totals.__setitem__(0, 55), "disagree"),
    (lambda s: s.rounds[1].players.__setitem__(0, 5), "players must be"),
    (lambda s: s.rounds[0].places.__setitem__(0, 3), "places"),
    (lambda s: s.first_sitters.append(0), "first_sitters"),
    (lambda s: s.first_sitters.__setitem__(1, s.first_sitters[0]), "different"),
    (lambda s: s.participants.__setitem__(1, s.participants[0]), "twice"),
])
def test_a_tampered_state_is_invalid_argument(stub: Stub, damage: Any, words: str) -> None:
    """States whose rounds, totals, places or names were tampered with: INVALID_ARGUMENT naming the state."""
    state = _played(stub)
    damage(state)
    for call, request in ((stub.TournamentStandings, pb.TournamentStateRequest(state=state)),
                          (stub.RecordTournamentRound,
                           pb.RecordTournamentRoundRequest(state=state, points=[0, 1, 2, 3], winner=0))):
        err = refused(call, request)
        assert err.code() == IA and words in err.details(), err.details()
        assert err.details().startswith("state")


@service
def test_a_round_after_the_end_in_the_state_is_invalid_argument(stub: Stub) -> None:
    """A state with a round recorded after the end is refused, naming the round."""
    state = record(stub, create(stub, ["Ann", "Bob", "Cid", "Dan"]), [0, 100, 0, 0], 0).state
    state.rounds.append(copy.deepcopy(state.rounds[-1]))
    err = refused(stub.TournamentStandings, pb.TournamentStateRequest(state=state))
    assert err.code() == IA and err.details() == "state: rounds[1]: recorded after the tournament ended"


@service
def test_randomly_damaged_states_are_never_internal(stub: Stub, json_stub: engine_pb2_grpc.JsonEngineStub) -> None:
    """The same damaged tournament on both faces: refused (or recorded), never INTERNAL."""
    good = po.tournament_dict(_played(stub))
    rng = random.Random(1)
    codes = set()
    for _ in range(150):
        state = copy.deepcopy(good)
        for _ in range(rng.randint(1, 3)):
            key = rng.choice(["first_sitters", "rounds", "participants", "seed"])
            if key == "seed":
                state["seed"] = rng.choice([0, 1, 2**64 - 1])
            elif key == "participants":
                state["participants"] = rng.choice([state["participants"][:-1], state["participants"] + ["Zed"],
                                                    state["participants"][::-1]])
            elif key == "first_sitters":
                state["first_sitters"] = [rng.randrange(8) for _ in range(rng.randrange(4))]
            elif state["rounds"]:
                r = rng.choice(state["rounds"])
                field = rng.choice(["players", "places", "totals"])
                if r[field]:
                    r[field][rng.randrange(len(r[field]))] = rng.randrange(0, 120)
        for call, request in (
                (stub.RecordTournamentRound,
                 pb.RecordTournamentRoundRequest(state=po.tournament_msg(state), points=[0, 1, 2, 3], winner=0)),
                (json_stub.RecordTournamentRound,
                 pb.JsonCall(args=orjson.dumps({"state": state, "points": [0, 1, 2, 3], "winner": 0})))):
            try:
                call(request, timeout=10)
                codes.add(grpc.StatusCode.OK)
            except grpc.RpcError as err:
                codes.add(err.code())
    assert codes <= {grpc.StatusCode.OK, IA, FP} and IA in codes


# ---------------------------------------------------------------- client and metrics


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(all_samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return all_samples.get((name, frozenset(labels.items())), 0.0)


@service
def test_the_client_speaks_json_and_raises_the_rules_errors(client: EngineClient) -> None:
    """The client's tournament calls answer the library's JSON and raise the rules' exceptions."""
    answer = client.create_tournament(FIVE, seed=3, rating=["Eve"])
    assert answer.state == Tournament.create(FIVE, 3, ["Eve"]).to_dict() and answer.events == []
    answer = client.record_tournament_round(answer.state, [0, 80, 10, 10], 0)
    assert answer.events[1] == {"type": "eliminated", "participants": ["Bob"]}
    standings = client.tournament_standings(answer.state)
    assert standings.next_players == [0, 2, 3, 4] and not standings.over
    assert standings.standings == Tournament.from_dict(answer.state).standings()
    assert client.create_tournament(FIVE).state["seed"] >= 0
    with pytest.raises(MalformedError):
        client.create_tournament(["Ann", "Ann", "Bob", "Cid"])
    with pytest.raises(MalformedError):
        client.record_tournament_round(answer.state, [0, 1], 0)
    with pytest.raises(MalformedError):
        client.record_tournament_round(answer.state, [0, 1, 2, 2**40], 0)   # by the rules: 0..200
    over = client.record_tournament_round(answer.state, [0, 80, 0, 0], 0).state
    with pytest.raises(IllegalActionError):
        client.record_tournament_round(over, [0, 1, 2, 3], 0)


@service
def test_tournament_calls_are_counted_like_the_others(engine: Any, stub: Stub) -> None:
    """Tournament calls appear in the call metrics by method and code."""
    state = create(stub, ["Ann", "Bob", "Cid", "Dan"])
    over = record(stub, state, [0, 100, 0, 0], 0).state
    stub.TournamentStandings(pb.TournamentStateRequest(state=over), timeout=10)
    refused(stub.RecordTournamentRound, pb.RecordTournamentRoundRequest(state=over, points=[0, 1, 2, 3], winner=0))
    refused(stub.CreateTournament, pb.CreateTournamentRequest(participants=["Ann"]))
    got = samples(engine.metrics())
    handled = "grpc_server_handled_total"
    for method, code in (("CreateTournament", "OK"), ("CreateTournament", "INVALID_ARGUMENT"),
                         ("RecordTournamentRound", "OK"), ("RecordTournamentRound", "FAILED_PRECONDITION"),
                         ("TournamentStandings", "OK")):
        assert value(got, handled, grpc_service="domino.v1.Engine", grpc_method=method, grpc_code=code) >= 1
    assert value(got, "grpc_server_handling_seconds_count", grpc_service="domino.v1.Engine",
                 grpc_method="RecordTournamentRound") >= 2
