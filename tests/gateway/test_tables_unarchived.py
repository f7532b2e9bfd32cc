"""A hosted match that ended without its gateway archiving it is archived by the next keeper pass of
any gateway on the same store (docs/operations.md "When the engine or the gateway fails as a match
ends"), exactly once: two gateways on one store (real SQLite, then a real Redis) and one archive
database, one of them with no engine. The gateway making the last move stops before archiving it,
as a worker killed between the store's write and the archive's would."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, cast

import pytest

from .conftest import EngineProc, Gateway, InProcess, gateway_env
from .test_tables import call, ok, open_table, over, play_step

pytestmark = pytest.mark.service

ONE_AND_A_BOT = [{"kind": "open"}, {"kind": "bot", "level": "random"}]


def test_a_match_its_gateway_did_not_archive_is_archived_by_a_later_pass_once(
        engine_proc: EngineProc, tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    from api_gateway.app import create_app
    from api_gateway.archive import database
    from api_gateway.config import from_env
    from api_gateway.hosting.keepers import Keeper
    from api_gateway.http.tables_routes import TABLES

    monkeypatch.setattr(Keeper, "start", lambda self: None)  # the keepers' passes are this test's calls
    env = gateway_env(tmp_path, store_url)
    archive_db = database.create(env["GATEWAY_DATABASE"])
    database.upgrade(archive_db)  # as `domino serve gateway` does at start
    archive_db.dispose()
    up_app = create_app(from_env({**env, "GATEWAY_ENGINE": engine_proc.address}))
    down_app = create_app(from_env({**env, "GATEWAY_ENGINE": "127.0.0.1:9", "GATEWAY_ENGINE_TIMEOUT": "0.5"}))
    up, down = up_app.extensions[TABLES].play.handoff, down_app.extensions[TABLES].play.handoff
    up.archive_after = 1.0
    store = up.matches.store
    gw = cast(Gateway, InProcess(up_app))

    def play_to_the_end(table: Any) -> None:
        for _ in range(3000):
            if play_step(gw, table) is None and over(gw, table):
                return
        raise AssertionError("the match did not end")

    # 1. archived at once by the gateway that ended it: nothing left for a later pass
    first = open_table(gw, ONE_AND_A_BOT, variant="block", players=2)
    play_to_the_end(first)
    assert gw.get(f"/v1/matches/{first.match_id}/record").status == 200
    assert store.unarchived(time.time() + 3600, 10) == []

    # 2. the gateway stops between the last move's write and the archive's
    again = ok(call(gw, "POST", f"/v1/tables/{first.table_id}/again", credential=first.host_key))["table"]
    second = type(first)(first.table_id, first.host_key, first.credentials, again["match_id"], first.opened)
    started = time.time()
    with monkeypatch.context() as stopped:  # the inline hand-off never happens
        stopped.setattr(up, "archive_match", lambda match_id, state: False)
        play_to_the_end(second)
    assert gw.get(f"/v1/matches/{second.match_id}/record").status == 404
    # not before `archive_after` from the end (the gateway of the last move may still be at it)
    assert store.unarchived(started + up.archive_after - 0.01, 10) == []
    time.sleep(1.1)
    assert store.unarchived(time.time(), 10) == [bytes.fromhex(second.match_id)]

    # 3. a gateway whose engine is down tries, warns, and leaves it for the next pass
    with caplog.at_level("WARNING", logger="api_gateway.hosting.handoff"):
        assert down.archive_due() == 0
    assert any("not archived yet" in r.getMessage() and second.match_id in r.getMessage() for r in caplog.records)
    assert all(r.exc_info is None for r in caplog.records)
    assert gw.get(f"/v1/matches/{second.match_id}/record").status == 404

    # 4. a gateway whose engine answers archives it, with its player; then no pass has anything to do
    assert up.archive_due() == 1
    archived = gw.get(f"/v1/matches/{second.match_id}/record")
    assert archived.status == 200, archived.body[:300]
    assert archived.json["seats"][0]["player"].startswith("guest:") and archived.json["seats"][1]["player"] is None
    assert archived.json["record"]["result"] is not None
    assert up.archive_due() == 0 and down.archive_due() == 0
    assert store.unarchived(time.time() + 3600, 10) == []
