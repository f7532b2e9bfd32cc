"""A correspondence match between two people whose apps are closed between moves (issue 38, "Tests as people
use it"): each person opens the app, makes a move and closes it; the host app's server hears every "your turn"
once, signed, in order, and the resignation and the end; its endpoint goes down for a while in the middle and
comes back.

Time, scaled: the clock allows three days a move (a correspondence clock: nothing expires meanwhile), and a
person counts as away 0.3 s after their last call (GATEWAY_PRESENCE_SECONDS) instead of 25 s, so "the app is
closed between moves" takes a fraction of a second; the webhook retries are tenths of a second. Every wait is
for a condition, bounded."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from .conftest import EngineProc, Gateway, launch_gateway, wait_for
from .test_tables import call, ok
from .test_webhooks import Receiver, Vouched, assertion, here, webhook_env

Json = dict[str, Any]
THREE_DAYS = 3 * 86400
#: Retries: more than 12 s in all, longer than the endpoint stays down.
RETRIES = "0.2,0.4,0.8,1.6,3.2,6.4"


def host_view(gw: Gateway, match_id: str, host_key: str) -> Json:
    """The public view, read with the host key (no seat's call: nobody counts as here for it)."""
    return ok(call(gw, "GET", f"/v1/matches/{match_id}/seat", credential=host_key))


def test_a_correspondence_match_with_the_apps_closed_tells_each_turn_once_through_an_outage(
        engine_proc: EngineProc, tmp_path: Path) -> None:
    receiver = Receiver().start()
    gw = launch_gateway(engine_proc.address, "--workers", "2", env=webhook_env(
        tmp_path, receiver.url, GATEWAY_PRESENCE_SECONDS="0.3", GATEWAY_WEBHOOK_RETRIES=RETRIES))
    try:
        opened = ok(call(gw, "POST", "/v1/tables", {
            "variant": "kozel", "players": 2, "seats": [{"kind": "open"}, {"kind": "open"}],
            "clock": {"move": THREE_DAYS}}), 201)
        table_id, host_key = opened["table_id"], opened["host_key"]
        credentials, match_id = [], ""
        for invite in opened["invites"]:
            joined = ok(call(gw, "POST", f"/v1/tables/{table_id}/join",
                             {"invite": invite["code"], "player": assertion(f"corr{invite['seat']}")}))
            credentials.append(joined["credential"])
            match_id = joined["match_id"]
        shown = Vouched(table_id, match_id, host_key, credentials, [])

        told: list[tuple[int, int]] = []   # (seat, seq): the "your turn" each change must make
        changes = 0
        rounds_dealt = 1
        outage: int | None = None   # len(told) when the endpoint went down
        while rounds_dealt < 2 or changes < 40:
            wait_for(lambda: here(gw, shown) == [False, False], 10)  # both apps closed
            view = host_view(gw, match_id, host_key)
            if changes == 6:
                receiver.fail_each = 10**6   # the endpoint goes down ...
                outage = len(told)
            elif (outage is not None and receiver.fail_each
                  and (len(told) >= outage + 2 or (len(told) > outage and changes >= 14))):
                # ... until a turn was told meanwhile (a seat drawing from the boneyard tells nobody, so eight
                # changes could pass with nothing sent), for two turns or eight changes, well within the retries'
                # 12 s; once an attempt has failed it comes back: what failed meanwhile is retried
                wait_for(lambda: receiver.failed() > 0, 10)
                receiver.fail_each = 0
            turn = view["turn"]
            if turn is None:                 # between rounds: the person who opens the app first deals
                if rounds_dealt == 2:
                    break
                seat = 0
                answer = ok(call(gw, "POST", f"/v1/matches/{match_id}/next-round", {}, credential=credentials[seat]))
                rounds_dealt += 1
            else:
                seat = turn
                legal = ok(call(gw, "GET", f"/v1/matches/{match_id}/legal", credential=credentials[seat]))
                answer = ok(call(gw, "POST", f"/v1/matches/{match_id}/apply", {"action": legal["actions"][0]},
                                 credential=credentials[seat]))
            changes += 1
            after = host_view(gw, match_id, host_key)
            assert after["seq"] == answer["seq"]
            if after["turn"] is not None and after["turn"] != seat:  # the other person's turn, their app closed
                told.append((after["turn"], answer["seq"]))
            if after["over"]:
                break
        assert outage is not None and receiver.fail_each == 0, "the outage came and went during play"
        wait_for(lambda: here(gw, shown) == [False, False], 10)
        resigned = ok(call(gw, "POST", f"/v1/matches/{match_id}/resign", credential=credentials[1]))
        assert any(e["type"] == "match_ended" for e in resigned["events"])

        def settled() -> list[Json] | None:
            got = receiver.of(table_id)
            kinds = Counter(b["type"] for b in got)
            done = kinds["your-turn"] >= len(told) and kinds["match-over"] == 2 and kinds["resigned"] == 2
            return got if done else None
        got = wait_for(settled, 60)
        assert not receiver.bad                                    # every delivery's signature checked
        ids = Counter(r.id for r in receiver.delivered if r.body["data"]["table_id"] == table_id)
        assert all(n == 1 for n in ids.values()), ids              # none twice by id
        turns = [(b["data"]["seat"], b["data"]["seq"]) for b in got if b["type"] == "your-turn"]
        assert sorted(turns) == sorted(told)                       # each turn told once, to its seat only
        assert turns == sorted(told, key=lambda t: t[1])           # in order, the outage's retries included
        assert {b["type"] for b in got[-4:]} == {"resigned", "match-over"}  # the end last
        assert len(set(receiver.attempts)) == len(ids)             # what failed in the outage came through
        assert len(receiver.attempts) > len(ids)                   # (there were failed attempts)
        players = {b["data"]["seat"]: b["data"]["player"] for b in got}
        assert players == {0: "app:corr0", 1: "app:corr1"}
        assert {b["data"]["by"] for b in got if b["type"] == "resigned"} == {1}
    finally:
        gw.stop()
        receiver.stop()
