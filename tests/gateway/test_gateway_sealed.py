"""Sealed mode through a real gateway: seat isolation, keys, tokens, and what a stateless design allows.

The rules library plays the same match alongside (same seed) so the tests know
every hidden tile and can check that no answer to a seat ever names a tile the
seat may not know: its own hand and the tiles on the table, nothing else,
until the round is over.
"""
from __future__ import annotations

import json
import re
from typing import Any

import pytest

from api_gateway.tokens import KeyRing, new_sealed
from engine_service.rules import Match

from .conftest import NEW_KEY, OLD_KEY, Gateway

pytestmark = pytest.mark.service

TILE = re.compile(r"(?<![\d-])([0-6])-([0-6])(?![\d-])")
SECRET_KEYS = {"state", "hands", "boneyard", "seed"}


OPAQUE = {"token", "seat_keys", "host_key", "match_id"}  # base64url may spell "1-6" by chance


def tiles_named(answer: Any) -> set[str]:
    """Every tile an answer mentions anywhere (in hands, layouts, actions, events), low first."""
    if isinstance(answer, dict):
        answer = {k: v for k, v in answer.items() if k not in OPAQUE}
    return {f"{min(a, b)}-{max(a, b)}" for a, b in TILE.findall(json.dumps(answer))}


def keys_named(answer: Any) -> set[str]:
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            found.update(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(answer)
    return found


def assert_only_public(answer: Any, reference: Match, viewer: int | None) -> None:
    """Nothing in `answer` reveals another seat's tiles, the boneyard order or the seed."""
    assert not keys_named(answer) & SECRET_KEYS, keys_named(answer) & SECRET_KEYS
    rnd = reference.to_dict()["round"]
    if rnd is None or rnd["over"]:
        return
    layout = tiles_named(rnd["layout"])
    own = set(rnd["hands"][viewer]) if viewer is not None else set()
    leaked = tiles_named(answer) - layout - own
    assert not leaked, f"seat {viewer} was shown {sorted(leaked)}"


def create(gateway: Gateway, players: int = 2, seed: int = 7) -> dict[str, Any]:
    r = gateway.post("/v1/matches", {"variant": "kozel", "players": players, "seed": seed, "mode": "sealed"})
    assert r.status == 201, r.json
    created: dict[str, Any] = r.json
    return created


def sealed(gateway: Gateway, path: str, token: str, key: str, **body: Any) -> Any:
    return gateway.post(f"/v1/matches/{path}", {"token": token, "seat_key": key, **body})


def test_creating_a_sealed_match_hands_out_keys_and_only_the_public_view(gateway: Gateway) -> None:
    created = create(gateway, players=4)
    assert set(created) == {"token", "match_id", "seq", "view", "scores", "seat_keys", "host_key", "events"}
    assert created["token"].startswith("v1.new.") and created["seq"] == 0
    assert len(created["seat_keys"]) == 4 and len(set(created["seat_keys"])) == 4
    view = created["view"]
    assert view["seat"] is None and view["hand"] == [] and view["legal"] == []
    assert view["hand_sizes"] == [7, 7, 7, 7]
    assert_only_public(created, Match.new("kozel", 4, seed=7)[0], None)


def test_a_whole_round_shows_each_seat_only_what_it_may_see(gateway: Gateway) -> None:
    created = create(gateway, players=2, seed=11)
    reference, _ = Match.new("kozel", 2, seed=11)
    token, keys = created["token"], created["seat_keys"]
    moves = 0
    while not reference.to_dict()["round"]["over"]:
        mover = reference.to_move
        for viewer in range(2):
            view = sealed(gateway, "view", token, keys[viewer])
            assert view.status == 200, view.json
            assert view.json["view"]["hand"] == reference.view(viewer)["hand"]
            assert view.json["view"]["boneyard_size"] == len(reference.to_dict()["round"]["boneyard"])
            assert_only_public(view.json, reference, viewer)
            legal = sealed(gateway, "legal", token, keys[viewer]).json
            assert legal["seat"] == mover
            assert legal["actions"] == (reference.legal_actions() if viewer == mover else [])
        action = reference.legal_actions()[-1]
        waiting = 1 - mover
        refused = sealed(gateway, "apply", token, keys[waiting], action="draw")
        assert refused.status == 409 and "turn" in refused.json["detail"]
        assert_only_public(refused.json, reference, waiting)
        r = sealed(gateway, "apply", token, keys[mover], action=action)
        assert r.status == 200, r.json
        assert r.json["events"] == reference.apply(action)  # the mover sees its own draws
        assert r.json["seq"] == moves + 1 and r.json["match_id"] == created["match_id"]
        assert_only_public(r.json, reference, mover)
        token = r.json["token"]
        moves += 1
    assert moves > 10
    final = sealed(gateway, "view", token, keys[0]).json["view"]
    assert final["round_over"] is True
    assert final["revealed_hands"] == reference.to_dict()["round"]["hands"]  # public once it is over


def test_a_seat_acts_only_as_itself(gateway: Gateway) -> None:
    created = create(gateway, players=4)
    token, keys = created["token"], created["seat_keys"]
    mover = created["view"]["to_move"]
    other = (mover + 1) % 4
    action = sealed(gateway, "legal", token, keys[mover]).json["actions"][0]
    r = sealed(gateway, "apply", token, keys[other], action=action, seat=mover)
    assert r.status == 403 and r.json["type"] == "/v1/problems/sealed-forbidden" and r.json["field"] == "seat"
    r = sealed(gateway, "view", token, keys[other], seat=mover)
    assert r.status == 403 and r.json["field"] == "seat"
    r = sealed(gateway, "timeout", token, keys[other], seat=mover)
    assert r.status == 403
    r = sealed(gateway, "replay", token, keys[other], actions=[action])
    assert r.status == 200 and (r.json["ok"], r.json["applied"], r.json["error_kind"]) == (False, 0, "illegal")
    assert r.json["seq"] == 0  # nothing applied: the same version comes back


def test_sealed_replay_applies_the_seats_own_actions(gateway: Gateway) -> None:
    created = create(gateway, players=4, seed=42)
    reference, _ = Match.new("kozel", 4, seed=42)
    mover = reference.to_move
    first = reference.legal_actions()[0]
    reference.apply(first)
    second = reference.legal_actions()[0]  # the next seat's
    r = sealed(gateway, "replay", created["token"], created["seat_keys"][mover], actions=[first, second])
    assert r.status == 200
    assert (r.json["ok"], r.json["applied"], r.json["failed_index"], r.json["error_kind"]) == (False, 1, 1, "illegal")
    assert r.json["seq"] == 1 and r.json["view"]["layout"] == reference.to_dict()["round"]["layout"]
    too_many = sealed(gateway, "replay", r.json["token"], created["seat_keys"][mover], actions=["pass"] * 33)
    assert too_many.status == 422


def test_the_host_key_sees_the_public_view_and_can_time_out_a_seat(gateway: Gateway) -> None:
    created = create(gateway, players=4)
    token, host = created["token"], created["host_key"]
    view = sealed(gateway, "view", token, host)
    assert view.status == 200 and view.json["view"]["hand"] == [] and view.json["view"]["seat"] is None
    legal = sealed(gateway, "legal", token, host).json
    assert legal["actions"] == [] and legal["seat"] == created["view"]["to_move"]
    r = sealed(gateway, "apply", token, host, action="1-1")
    assert r.status == 403 and r.json["field"] == "seat_key"
    r = sealed(gateway, "timeout", token, host, seat=2)
    assert r.status == 200, r.json
    assert r.json["view"]["match_over"] is True and r.json["view"]["hand"] == []


def test_a_seat_may_time_out_itself(gateway: Gateway) -> None:
    created = create(gateway, players=4)
    r = sealed(gateway, "timeout", created["token"], created["seat_keys"][1], seat=1)
    assert r.status == 200 and r.json["view"]["match_over"] is True and r.json["view"]["seat"] == 1


def test_calls_a_seat_could_abuse_are_transparent_only(gateway: Gateway) -> None:
    created = create(gateway, players=4)
    token, key = created["token"], created["seat_keys"][0]
    r = sealed(gateway, "settle", token, key, ending="out", hands=[[], ["6-6"], ["1-2"], ["0-1"]])
    assert r.status == 403 and r.json["type"] == "/v1/problems/sealed-forbidden"
    r = sealed(gateway, "next-round", token, key, deal={"hands": [[], [], [], []]})
    assert r.status == 403 and r.json["field"] == "deal"
    r = sealed(gateway, "next-round", token, key)  # from the seed: allowed, refused by the rules for now
    assert r.status == 409 and "still being played" in r.json["detail"]


def _flip(text: str, index: int) -> str:
    return text[:index] + ("A" if text[index] != "A" else "B") + text[index + 1:]


def test_tampered_truncated_and_foreign_tokens_are_400(gateway: Gateway) -> None:
    created = create(gateway, players=4)
    token, key = created["token"], created["seat_keys"][0]
    foreign = KeyRing.parse(KeyRing.generate("new")).seal(new_sealed(b"\x0a\x05kozel\x10\x04"))
    bad_tokens = [_flip(token, i) for i in range(7, len(token), max(1, len(token) // 25))]
    bad_tokens += [token[:-1], token[: len(token) // 2], token + "A", foreign, "v1.retired.AAAA",
                   token.replace("v1.new.", "v1.old.", 1), "garbage", "v1." + "A" * 500]
    for bad in bad_tokens:
        r = sealed(gateway, "view", bad, key)
        assert r.status == 400, (bad, r.status, r.body[:200])
        assert r.json["type"] == "/v1/problems/invalid-token" and r.json["field"] == "token"


def test_wrong_seat_keys_are_403(gateway: Gateway) -> None:
    first, second = create(gateway, players=4), create(gateway, players=4)
    token = first["token"]
    good = first["seat_keys"][1]
    for bad in (second["seat_keys"][1], second["host_key"], "1." + good[2:][::-1], "7" + good[1:], "host.x",
                good[:-1], "x" * 40):
        r = sealed(gateway, "view", token, bad)
        assert r.status == 403, (bad, r.json)
        assert r.json["type"] == "/v1/problems/wrong-seat-key" and r.json["field"] == "seat_key"


def test_tokens_of_the_previous_key_still_open_and_come_back_under_the_newest(gateway: Gateway) -> None:
    """The session gateway holds "new" (sealing) and "old": a rotation in progress."""
    created = create(gateway, players=4)
    keys = KeyRing.parse(f"{NEW_KEY},{OLD_KEY}")
    content = keys.open(created["token"])
    old_token = KeyRing.parse(OLD_KEY).seal(content)
    assert old_token.startswith("v1.old.")
    mover = created["view"]["to_move"]
    action = sealed(gateway, "legal", old_token, created["seat_keys"][mover]).json["actions"][0]
    r = sealed(gateway, "apply", old_token, created["seat_keys"][mover], action=action)
    assert r.status == 200 and r.json["token"].startswith("v1.new.")


def test_an_older_token_is_refused_as_stale(gateway: Gateway) -> None:
    """docs/security.md: only the latest token of a match is accepted (the version store), so a seat
    cannot fork the match from a token it kept, nor read anything through one."""
    created = create(gateway, players=4)
    token, keys = created["token"], created["seat_keys"]
    mover = created["view"]["to_move"]
    action = sealed(gateway, "legal", token, keys[mover]).json["actions"][0]
    first = sealed(gateway, "apply", token, keys[mover], action=action)
    assert first.status == 200 and first.json["seq"] == 1
    # The very same request again is a retry after an unknown outcome (a 503): the winner's answer, unchanged.
    retried = sealed(gateway, "apply", token, keys[mover], action=action)
    assert retried.status == 200 and retried.body == first.body
    for call, extra in (("replay", {"actions": [action]}), ("view", {}),
                        ("legal", {}), ("timeout", {}), ("next-round", {})):
        again = sealed(gateway, call, token, keys[mover], **extra)  # the old token, once more
        assert again.status == 409, (call, again.json)
        assert again.json["type"] == "/v1/problems/stale-token" and again.json["latest"] == 1
        assert again.json["field"] == "token" and "view" not in again.json
    latest = sealed(gateway, "view", first.json["token"], keys[mover])
    assert latest.status == 200 and latest.json == {"view": first.json["view"], "scores": first.json["scores"]}
