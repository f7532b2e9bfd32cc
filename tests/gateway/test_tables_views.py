"""Nothing beyond the seat's view (issue 24): whole matches of every variant (`GET /v1/variants`) played
through tables of people only (so that every hand is known from its own seat's stream), with a low
target where the variant has one so that a match is a round or two. At every version:

- no line on a seat's stream holds a tile that is in another seat's hand after that change (a drawn
  tile, a hand not yet played), before the round's end reveals the hands;
- no public line (the host's and spectators' stream) holds a tile that is in any seat's hand;
- no line holds a seed or the boneyard's (the pile's) order: only counts;
- a reconnect (`GET .../seat`, and a stream resumed from id 0) answers the same lines, never more.
"""
from __future__ import annotations

import json
import re
from typing import Any

import pytest

from .conftest import Gateway
from .test_tables import Event, call, ok, open_table, play_step, seat_stream

pytestmark = pytest.mark.service

TILE = re.compile(r'"([0-6]-[0-6])')
#: Steps at most per match (a step is one apply or one deal): the low targets end every match far sooner.
MAX_STEPS = 400


def _tiles(value: Any) -> set[str]:
    return set(TILE.findall(json.dumps(value)))


def _hand(line: Any) -> set[str]:
    view = line.get("view") or {}
    return set(view.get("hand") or []) if isinstance(view, dict) else set()


def _round_over(line: Any) -> bool:
    view = line.get("view") or {}
    return bool(view.get("round_over") or view.get("revealed_hands") or view.get("match_over"))


def _secrets(value: Any, path: str = "") -> list[str]:
    """Members that would give away hidden order: a seed, a boneyard or pile listed tile by tile."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}"
            if key == "seed" and item is not None:
                found.append(where)
            elif key in ("boneyard", "pile", "deck", "stock", "draw_pile") and isinstance(item, list) \
                    and any(x is not None for x in item):
                found.append(where)
            found += _secrets(item, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _secrets(item, f"{path}[{i}]")
    return found


def _variants(gw: Gateway) -> list[dict[str, Any]]:
    return ok(call(gw, "GET", "/v1/variants"))["variants"]  # type: ignore[no-any-return]


def _lines(stream_events: list[Event]) -> dict[int, Any]:
    return {e.id: e.data for e in stream_events if e.kind == "update" and e.id is not None}


def test_no_viewer_sees_beyond_its_view_in_any_variant(tables_gw: Gateway) -> None:
    gw = tables_gw
    checked = []
    for variant in _variants(gw):
        names = {o["name"] for o in variant["options"]}
        options = {"target": 25} if "target" in names else {}  # a round or a few
        for players in sorted({variant["min_players"], variant["max_players"]}):
            table = open_table(gw, seats=[{"kind": "open"}] * players, variant=variant["name"], players=players,
                               options=options)
            streams = [seat_stream(gw, table.match_id, c) for c in table.credentials]
            public = seat_stream(gw, table.match_id, query=table.watch)
            views = [s.next() for s in (*streams, public)]
            assert all(v is not None and v.kind == "view" for v in views)
            for _ in range(MAX_STEPS):
                if play_step(gw, table) is None and ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat",
                                                            credential=table.host_key))["over"]:
                    break
            latest = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))
            last = latest["seq"]
            got = [_lines(s.until(lambda e, last=last: e.kind == "end" or e.id == last, 30))
                   for s in (*streams, public)]
            for s in (*streams, public):
                s.close()
            first = views[0].id  # type: ignore[union-attr]
            for viewer, lines in enumerate(got):
                assert sorted(lines) == list(range(first + 1, latest["seq"] + 1)), (variant["name"], viewer)
            for seq in range(first + 1, latest["seq"] + 1):
                seat_lines = [got[s][seq] for s in range(players)]
                hands = [_hand(line) for line in seat_lines]
                if not any(_round_over(line) for line in seat_lines):
                    for viewer in range(players):
                        others = set().union(*(hands[j] for j in range(players) if j != viewer))
                        leaked = _tiles(seat_lines[viewer]) & others
                        assert not leaked, (variant["name"], players, seq, viewer, leaked)
                    leaked = _tiles(got[players][seq]) & set().union(*hands)
                    assert not leaked, (variant["name"], players, seq, "public", leaked)
                for viewer, line in enumerate((*seat_lines, got[players][seq])):
                    assert not _secrets(line), (variant["name"], seq, viewer, _secrets(line))
            # reconnect answers: the latest of each seat, and a stream resumed from the first id, hold the same
            for seat, credential in enumerate(table.credentials):
                again = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=credential))
                assert again["seat"] == seat and not _secrets(again["view"])
                if latest["seq"] > first:
                    assert again["view"] == got[seat][latest["seq"]]["view"]
                resumed = seat_stream(gw, table.match_id, credential, last=first)
                assert _lines(resumed.until(lambda e, last=last: e.kind == "end" or e.id == last, 30)) == got[seat]
                resumed.close()
            checked.append((variant["name"], players, latest["seq"], latest["over"]))
    assert {name for name, *_ in checked} == {v["name"] for v in _variants(gw)}
    assert sum(1 for *_, done in checked if done) >= len(checked) - 2, checked  # (nearly) all whole matches
