"""Match records over REST (docs/records.md) and the spectator stream, against real processes.

- `POST /v1/matches/record` in both modes: transparent in every view; sealed, the key decides
  (a seat's own record, the host's spectator record, the full one once the match is over);
- `POST /v1/records/import` and `/replay` give the state back, and refuse a corrupt record
  naming the move (409 for a move the rules refuse, 400 for one that cannot be read);
- `GET /v1/matches/{id}/spectate` against a real gateway on each store kind (SQLite, Redis): the
  description first, every event as it happens, no tile a spectator could not see before the
  round ends, the hands revealed when it ends, `end` when the match ends; an idle stream closes;
  an unknown match is 404.
"""
from __future__ import annotations

import json
import re
import threading
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.redis_server import RedisServer

from .conftest import TOKEN_KEYS, EngineProc, Gateway

pytestmark = pytest.mark.service

TILE = re.compile(r'"([0-6]-[0-6])"')


def _sealed(gw: Gateway, path: str, token: str, key: str, **extra: Any) -> dict[str, Any]:
    reply = gw.post("/v1/matches" + path, {"token": token, "seat_key": key, **extra})
    assert reply.status == 200, (path, reply.status, reply.body[:300])
    body: dict[str, Any] = reply.json
    return body


def _play_sealed(gw: Gateway, variant: str, players: int, upto: int | None = None) -> tuple[dict[str, Any], list[str]]:
    """A sealed match, every seat playing its first legal action (`upto` actions, else to the end)."""
    game = gw.post("/v1/matches", {"variant": variant, "players": players, "mode": "sealed", "seed": 7}).json
    keys, host = game["seat_keys"], game["host_key"]
    token = game["token"]
    done = 0
    while upto is None or done < upto:
        view = game["view"]
        if view.get("match_over") or view.get("game_over"):
            break
        if view.get("round_over"):
            game = _sealed(gw, "/next-round", token, host)
            token = game["token"]
            continue
        seat = view["to_move"]
        legal = _sealed(gw, "/legal", token, keys[seat])["actions"]
        game = _sealed(gw, "/apply", token, keys[seat], action=legal[0])
        token = game["token"]
        done += 1
    return {**game, "token": token, "host_key": host}, keys


# ---------------------------------------------------------------- records


def test_transparent_records_in_every_view_round_trip(gateway: Gateway) -> None:
    state = gateway.post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 3}).json["state"]
    played = gateway.post("/v1/matches/replay", {"state": state, "actions": ["1-1"]}).json
    assert played["ok"], played
    full = gateway.post("/v1/matches/record", {"state": played["state"], "names": ["A", "B", "C", "D"]})
    assert full.status == 200, full.body[:300]
    record = full.json
    assert record["record"]["view"] == "full" and record["text"].startswith('[Record "domino-record 1"]')
    for form in ({"text": record["text"]}, {"record": record["record"]}):
        imported = gateway.post("/v1/records/import", form).json
        assert imported["state"] == played["state"] and imported["moves"] == 3
    replayed = gateway.post("/v1/records/replay", {"text": record["text"], "upto": 2}).json
    assert replayed["move"] == 2 and replayed["state"]["round"]["layout"] == []
    seat = gateway.post("/v1/matches/record", {"state": played["state"], "view": "seat 1"}).json
    assert seat["record"]["seed"] is None
    checked = gateway.post("/v1/records/import", {"text": seat["text"]}).json
    assert checked["state"] is None and checked["moves"] == 3


def test_a_corrupt_record_is_refused_naming_the_move(gateway: Gateway) -> None:
    state = gateway.post("/v1/matches", {"variant": "block", "players": 2, "seed": 42}).json["state"]
    played = gateway.post("/v1/matches/replay", {"state": state, "actions": ["0-4", "4-5@E", "1-5@E"]}).json
    text = gateway.post("/v1/matches/record", {"state": played["state"]}).json["text"]
    swapped = text.replace("\n4. S1 ", "\n4. S0 ")
    reply = gateway.post("/v1/records/import", {"text": swapped})
    assert reply.status == 409 and "move 4, line 16" in reply.json["detail"], reply.json
    reply = gateway.post("/v1/records/import", {"text": text[: text.index("\n5. ")]})
    assert reply.status == 400 and "move 5" in reply.json["detail"], reply.json
    reply = gateway.post("/v1/records/import", {"text": text, "record": {}})
    assert reply.status == 422


def test_sealed_records_follow_the_key(gateway: Gateway) -> None:
    game, keys = _play_sealed(gateway, "kozel", 4, upto=5)
    token, host = game["token"], game["host_key"]
    seat = _sealed(gateway, "/record", token, keys[2])["record"]
    assert seat["view"] == "seat 2" and seat["seed"] is None
    dealt = next(e for m in seat["moves"] for e in m["events"] if e["type"] == "dealt")
    assert [h is None for h in dealt["hands"]] == [True, True, False, True]
    spectator = _sealed(gateway, "/record", token, host)["record"]
    assert spectator["view"] == "spectator" and not any(e["type"] == "dealt" for m in spectator["moves"]
                                                         for e in m["events"])
    reply = gateway.post("/v1/matches/record", {"token": token, "seat_key": host, "view": "full"})
    assert reply.status == 422
    over, keys = _play_sealed(gateway, "block", 2)
    assert over["view"]["match_over"]
    full = _sealed(gateway, "/record", over["token"], keys[0])
    assert full["record"]["view"] == "full" and full["record"]["seed"] == 7
    assert gateway.post("/v1/records/import", {"text": full["text"]}).status == 200


# ---------------------------------------------------------------- the spectator stream


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'versions.sqlite3'}"
        return
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server.url
    server.stop()


@pytest.fixture
def sealed_gateway(engine_proc: EngineProc, start_gateway: Callable[..., Gateway], store_url: str) -> Gateway:
    return start_gateway(engine_proc.address, env={"STATE_TOKEN_KEYS": TOKEN_KEYS, "GATEWAY_TOKEN_STORE": store_url,
                                                    "GATEWAY_SPECTATE_IDLE": "3"})


class Watcher(threading.Thread):
    """Reads a spectator stream line by line as it comes."""

    def __init__(self, gw: Gateway, match_id: str) -> None:
        super().__init__(daemon=True)
        self.url = f"{gw.url}/v1/matches/{match_id}/spectate"
        self.lines: list[dict[str, Any]] = []
        self.content_type = ""

    def run(self) -> None:
        with urllib.request.urlopen(self.url, timeout=30) as stream:
            self.content_type = stream.headers["Content-Type"]
            for raw in stream:
                self.lines.append(json.loads(raw))


@pytest.mark.parametrize("variant,players", [("kozel", 4), ("kingdomino", 2)])
def test_a_spectator_watches_a_live_sealed_match_to_its_end(sealed_gateway: Gateway, variant: str,
                                                            players: int) -> None:
    gw = sealed_gateway
    first, keys = _play_sealed(gw, variant, players, upto=0)
    watcher = Watcher(gw, first["match_id"])
    watcher.start()
    game, _ = _play_sealed_from(gw, first, keys, moves=40 if variant == "kozel" else None)
    if variant == "kozel":  # a long match: the host times seat 0 out (K's timeout rule ends it)
        game = _sealed(gw, "/timeout", game["token"], game["host_key"], seat=0)
    watcher.join(30)
    assert not watcher.is_alive()
    lines = watcher.lines
    assert watcher.content_type.startswith("application/x-ndjson")
    assert lines[0]["type"] == "description" and lines[0]["variant"] == variant
    assert lines[-1] == {"type": "end"}
    kinds = [line["type"] for line in lines]
    if variant == "kingdomino":
        assert "tile_placed" in kinds and kinds[-2] == "game_over"
        assert all(line.get("seed") is None for line in lines)
        return
    assert "round_dealt" in kinds and "match_ended" in kinds
    played: set[str] = set()
    for line in lines:  # before a round's end, a spectator sees only tiles played
        if line["type"] == "round_dealt":
            played = set()
        if line["type"] == "played":
            played |= set(re.findall(r"[0-6]-[0-6]", line["action"]))
        if line["type"] == "drew":
            assert line["tile"] is None
        if line["type"] == "revealed":
            continue
        assert set(TILE.findall(json.dumps(line))) <= played, line
    assert "revealed" in kinds[kinds.index("round_ended"):]


def _play_sealed_from(gw: Gateway, game: dict[str, Any], keys: list[str], moves: int | None) -> tuple[dict[str, Any], int]:
    token, host = game["token"], game["host_key"]
    done = 0
    while moves is None or done < moves:
        view = game["view"]
        if view.get("match_over") or view.get("game_over"):
            break
        if view.get("round_over"):
            game = {**_sealed(gw, "/next-round", token, host), "host_key": host}
            token = game["token"]
            continue
        seat = view["to_move"]
        legal = _sealed(gw, "/legal", token, keys[seat])["actions"]
        game = {**_sealed(gw, "/apply", token, keys[seat], action=legal[0]), "host_key": host}
        token = game["token"]
        done += 1
    return game, done


def test_an_idle_stream_closes_and_an_unknown_match_is_404(sealed_gateway: Gateway) -> None:
    gw = sealed_gateway
    game, _ = _play_sealed(gw, "block", 2, upto=1)
    watcher = Watcher(gw, game["match_id"])
    watcher.start()
    watcher.join(20)
    assert not watcher.is_alive()
    assert watcher.lines[0]["type"] == "description"
    assert watcher.lines[-1] == {"type": "closed", "reason": "idle"}
    assert gw.get("/v1/matches/" + "ab" * 16 + "/spectate").status == 404
    assert gw.get("/v1/matches/nothex/spectate").status == 404


def test_the_rest_example_of_the_records_doc_works_as_pasted(gateway: Gateway, tmp_path: Path) -> None:
    import subprocess

    doc = (Path(__file__).resolve().parents[2] / "docs" / "records.md").read_text(encoding="utf-8")
    (script,) = re.findall(r"<!-- records example: rest -->\s*```sh\n(.*?)\n```", doc, flags=re.DOTALL)
    assert "G=http://localhost:8080" in script
    script = script.replace("G=http://localhost:8080", f"G={gateway.url}")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == '[Record "domino-record 1"]' and out[-2:] == ["5", '["0-4"]'], out


# ---------------------------------------------------------------- the log a state keeps (issue 27)


def test_a_transparent_match_keeps_its_current_round_and_its_answers_carry_the_rest(gateway: Gateway) -> None:
    """A transparent state keeps its current round's log; each round-ending answer carries the lines that
    left it (`record_lines`), and the record is exported with them joined (`prior`), checked exactly."""
    answer = gateway.post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 11}).json
    state, lines, rounds = answer["state"], list(answer.get("record_lines", [])), 0
    while not state["match_over"] and rounds < 3:
        if state["round"]["over"]:
            answer = gateway.post("/v1/matches/next-round", {"state": state}).json
        else:
            legal = gateway.post("/v1/matches/legal", {"state": state}).json["actions"]
            answer = gateway.post("/v1/matches/apply", {"state": state, "action": legal[0]}).json
            if "record_lines" in answer:
                rounds += 1
                assert answer["state"]["round"]["over"] or answer["state"]["match_over"]
        state = answer["state"]
        lines += answer.get("record_lines", [])
    assert rounds >= 1 and state["log_count"] == len(lines) and lines[0] == "new"
    assert not any(line.startswith("new") for line in state["log"])
    refused = gateway.post("/v1/matches/record", {"state": state})
    assert refused.status == 400 and "prior" in refused.body.decode()
    swapped = [*lines[:-2], lines[-1], lines[-2]]
    assert gateway.post("/v1/matches/record", {"state": state, "prior": swapped}).status == 400
    record = gateway.post("/v1/matches/record", {"state": state, "prior": lines})
    assert record.status == 200, record.body[:300]
    steps = [m["step"] for m in record.json["record"]["moves"]]
    assert steps == lines + state["log"]
    imported = gateway.post("/v1/records/import", {"text": record.json["text"]}).json
    assert imported["state"] == state and imported["record_lines"] == lines


def test_a_sealed_match_over_several_rounds_exports_its_whole_record_from_the_store(sealed_gateway: Gateway) -> None:
    """Sealed: the lines that leave the state go to the gateway's store (SQLite, Redis) with the move that
    ended their round, never to a seat; the record of a match over several rounds is whole."""
    gw = sealed_gateway
    game = gw.post("/v1/matches", {"variant": "kozel", "players": 4, "mode": "sealed", "seed": 5}).json
    keys, host, token = game["seat_keys"], game["host_key"], game["token"]
    rounds = 0
    while rounds < 2:
        view = game["view"]
        assert "record_lines" not in game
        if view["match_over"]:
            break
        if view["round_over"]:
            rounds += 1
            game = _sealed(gw, "/next-round", token, host)
        else:
            seat = view["to_move"]
            legal = _sealed(gw, "/legal", token, keys[seat])["actions"]
            game = _sealed(gw, "/apply", token, keys[seat], action=legal[0])
        token = game["token"]
    game = _sealed(gw, "/timeout", token, host, seat=0)  # K's timeout rule ends the match: the full record
    assert game["view"]["match_over"]
    full = _sealed(gw, "/record", game["token"], host)["record"]
    steps = [m["step"] for m in full["moves"]]
    assert full["view"] == "full" and steps[0] == "new" and steps[-1] == "timeout 0"
    assert sum(1 for s in steps if s == "deal") >= 2
    reply = gw.post("/v1/matches/record", {"token": game["token"], "seat_key": host, "prior": ["new"]})
    assert reply.status == 422
