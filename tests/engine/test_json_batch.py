"""`JsonEngine/Batch` against a real engine process: several calls of the JSON face in one (docs/grpc.md
"Batches").

- Each item is answered as its own call would be: the same answer's bytes, or the same status and details.
- An item that needs one of the engine's bot workers (an expert seat to play, an expert Suggest, Hints) is
  not run: it comes back deferred, counted nowhere, and the same call sent on its own is answered.
- Each answered item is counted and logged as its own call; the batch once more, as itself.
"""
from __future__ import annotations

import re
from typing import Any

import grpc
import orjson
import pytest
from conftest import EngineProcess
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc
from domino.v1.jsonargs import MAX_BATCH

from engine_service.rules import Match

pytestmark = pytest.mark.service

JsonStub = engine_pb2_grpc.JsonEngineStub
Json = dict[str, Any]


def item(method: str, args: Json, state: bytes = b"") -> pb.JsonBatchItem:
    return pb.JsonBatchItem(method=method, call=pb.JsonCall(args=orjson.dumps(args), state=state))


def alone(json_stub: JsonStub, it: pb.JsonBatchItem) -> tuple[int, str, bytes]:
    """The item sent as a call of its own: (status code, details, the answer's bytes)."""
    try:
        answer: pb.JsonAnswer = getattr(json_stub, it.method)(it.call, timeout=30)
    except grpc.RpcError as err:
        return err.code().value[0], err.details() or "", b""
    return 0, "", answer.SerializeToString()


def counted(engine: EngineProcess, name: str, **labels: str) -> float:
    """The sum of a metric's samples whose labels include `labels`."""
    total = 0.0
    for line in engine.metrics().splitlines():
        m = re.match(rf"{name}\{{(.*)\}} (\S+)$", line)
        if m and all(f'{k}="{v}"' in m.group(1) for k, v in labels.items()):
            total += float(m.group(2))
    return total


def _transparent_kozel(json_stub: JsonStub) -> Json:
    reply = json_stub.NewMatch(pb.JsonCall(args=orjson.dumps({"variant": "kozel", "players": 4, "seed": 7})),
                               timeout=10)
    state: Json = orjson.loads(reply.answer)["state"]
    return state


def test_each_item_is_answered_as_its_own_call_would_be_in_order(json_stub: JsonStub) -> None:
    state = _transparent_kozel(json_stub)
    match = Match.from_dict(state)
    to_move = match.to_move
    items = [
        item("NewMatch", {"variant": "osel", "players": 3, "seed": 11}),
        item("ListVariants", {}),
        item("Apply", {"state": state, "action": match.legal_actions()[0]}),
        item("Apply", {"state": state, "action": match.legal_actions()[0], "seat": (to_move + 1) % 4}),  # not its turn
        item("View", {"state": state, "seat": 9}),  # no such seat
        item("Apply", {"state": state}),  # no action
        item("NewMatch", {"variant": "kozel", "players": 4, "seed": 7, "view_as": "host"}),  # sealed
    ]
    reply = json_stub.Batch(pb.JsonBatch(items=items), timeout=30)
    assert len(reply.answers) == len(items)
    codes = []
    for it, answer in zip(items, reply.answers, strict=True):
        assert not answer.deferred
        code, details, answered = alone(json_stub, it)
        assert (answer.code, answer.details) == (code, details), it.method
        if code == 0:
            assert answer.answer.SerializeToString() == answered, it.method  # seeded: the same bytes
        codes.append(code)
    ok, fp, ia = (grpc.StatusCode.OK.value[0], grpc.StatusCode.FAILED_PRECONDITION.value[0],
                  grpc.StatusCode.INVALID_ARGUMENT.value[0])
    assert codes == [ok, ok, ok, fp, ia, ia, ok]
    assert reply.answers[4].details.startswith("seat")
    assert reply.answers[5].details == "action: required"


def test_an_unknown_method_or_a_batch_in_a_batch_is_refused_as_its_item() -> None:
    # (through the servicer itself: the answer names the calls a batch may carry)
    from engine_service.edge.json_face import JsonEngineServicer

    face = JsonEngineServicer(log_calls=False)

    class Context:
        def peer(self) -> str:
            return "test"

    answer = face.Batch(pb.JsonBatch(items=[item("Nope", {}), item("Batch", {}), item("ListVariants", {})]),
                        Context())  # type: ignore[arg-type]
    ia = grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert [a.code for a in answer.answers] == [ia, ia, 0]
    assert answer.answers[0].details.startswith("method: one of Apply, ") and "not 'Nope'" in answer.answers[0].details
    assert "not 'Batch'" in answer.answers[1].details
    assert orjson.loads(answer.answers[2].answer.answer)["variants"]


def test_more_calls_than_a_batch_holds_are_refused_whole(json_stub: JsonStub) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        json_stub.Batch(pb.JsonBatch(items=[item("ListVariants", {})] * (MAX_BATCH + 1)), timeout=10)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details() == f"items: at most {MAX_BATCH} calls in a batch, not {MAX_BATCH + 1}"
    full = json_stub.Batch(pb.JsonBatch(items=[item("ListVariants", {})] * MAX_BATCH), timeout=10)
    assert len(full.answers) == MAX_BATCH and not any(a.code for a in full.answers)


def test_an_item_that_needs_a_bot_worker_is_deferred_and_answered_alone(json_stub: JsonStub) -> None:
    leader = Match.new("all-fives", 2, seed=5)[0].to_move
    assert leader is not None
    expert_leads = item("NewMatch", {"variant": "all-fives", "players": 2, "seed": 5,
                                     "bots": [{"seat": leader, "level": "expert"}]})
    state = _transparent_kozel(json_stub)
    items = [expert_leads,
             item("Suggest", {"state": state, "level": "expert"}),
             item("Hints", {"state": state, "seat": Match.from_dict(state).to_move}),
             item("Suggest", {"state": state, "level": "greedy"})]
    reply = json_stub.Batch(pb.JsonBatch(items=items), timeout=30)
    assert [a.deferred for a in reply.answers] == [True, True, True, False]
    assert [a.code for a in reply.answers] == [0, 0, 0, 0]
    assert not reply.answers[0].HasField("answer")
    assert orjson.loads(reply.answers[3].answer.answer)["action"] in Match.from_dict(state).legal_actions()
    # sent on its own, the deferred call is answered: the expert played the first move
    code, _details, answered = alone(json_stub, expert_leads)
    assert code == 0
    events = orjson.loads(pb.JsonAnswer.FromString(answered).answer)["events"]
    assert any(e.get("seat") == leader and e["type"] in ("played", "drew", "passed") for e in events)


def test_each_item_is_counted_and_logged_as_its_own_call_and_a_deferred_one_is_not(
        engine: EngineProcess, json_stub: JsonStub) -> None:
    json_engine = "domino.v1.JsonEngine"
    leader = Match.new("all-fives", 2, seed=8)[0].to_move
    assert leader is not None
    started = json_stub.NewMatch(pb.JsonCall(args=orjson.dumps({
        "variant": "all-fives", "players": 2, "seed": 8, "bots": [{"seat": 1 - leader, "level": "expert"}]})),
        timeout=10)
    state = orjson.loads(started.answer)["state"]
    action = Match.from_dict(state).legal_actions()[0]
    human_then_expert = item("Apply", {"state": state, "action": action})

    def snapshot() -> tuple[float, float, float, float, int]:
        lines = [r for r in engine.logs() if r.get("msg") == "call"]
        return (counted(engine, "grpc_server_handled_total", grpc_service=json_engine, grpc_method="ListVariants",
                        grpc_code="OK"),
                counted(engine, "grpc_server_handled_total", grpc_service=json_engine, grpc_method="Batch",
                        grpc_code="OK"),
                counted(engine, "grpc_server_handled_total", grpc_service=json_engine, grpc_method="Apply"),
                counted(engine, "domino_engine_actions_applied_total", variant="all-fives"),
                sum(r["method"] == f"/{json_engine}/ListVariants" for r in lines))

    before = snapshot()
    reply = json_stub.Batch(pb.JsonBatch(items=[item("ListVariants", {}), human_then_expert, item("ListVariants", {})]),
                            timeout=30)
    assert [a.deferred for a in reply.answers] == [False, True, False]
    after = snapshot()
    assert after[0] - before[0] == 2 and after[1] - before[1] == 1  # each answered item, and the batch
    assert after[2] == before[2] and after[3] == before[3]  # the deferred Apply: not counted, nothing applied
    assert after[4] - before[4] == 2  # a log line for each answered item
    code, _details, _answered = alone(json_stub, human_then_expert)
    assert code == 0
    again = snapshot()
    assert again[2] - after[2] == 1 and again[3] - after[3] == 2  # sent alone: one call, the person's and the bot's
