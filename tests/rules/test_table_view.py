"""A view's ``table`` and ``legal_moves`` (issue 26): the layout and the legal actions structured, so
that no client re-reads the notation. The table must be exactly what reading ``layout``'s notation
gives (the reading the terminal and the page used to do, kept here as the reference), over random
rounds of every variant."""
from __future__ import annotations

import random
import re
from typing import Any

import pytest

from engine_service.rules import Kingdomino, Match
from engine_service.rules.kingdomino_notation import KingdominoMove
from engine_service.rules.layout import LINE
from engine_service.rules.notation import Move
from engine_service.rules.registry import PRESETS
from engine_service.rules.views import public_view

_PLACED = re.compile(r"^(\d)-(\d)(?:@([NSEW]\d*)(!?))?$")


def read_layout(layout: list[str], open_arms: list[str]) -> dict[str, Any]:
    """The table read from the layout's notation, as clients/table.py and play.js read it before the
    view said it: each tile turned so that its near half touches the tile before it, a spinner's
    side (Nk/Sk) growing from the k-th double played; then the open arms that hold no tile yet."""
    lead: list[int] | None = None
    arms: dict[str, dict[str, Any]] = {}
    doubles: list[tuple[str | None, int]] = []
    ends: dict[str, int] = {}
    for index, move in enumerate(layout):
        found = _PLACED.match(move)
        assert found is not None, move
        a, b, arm, closed = int(found[1]), int(found[2]), found[3], found[4] == "!"
        if arm is None:
            lead, ends = [a, b], {"W": a, "E": b}
            arms = {"W": _arm(None), "E": _arm(None)}
            if a == b:
                doubles.append((None, 0))
            continue
        if arm not in ends:
            where = _anchor(arm, doubles)
            arms[arm] = _arm({"arm": where[0], "index": where[1]})
            assert lead is not None
            ends[arm] = lead[0] if where[0] is None else arms[where[0]]["tiles"][where[1]][1]
        near = ends[arm]
        far = b if a == near else a
        arms[arm]["tiles"].append([near, far])
        arms[arm]["order"].append(index)
        arms[arm]["closed"] = closed
        ends[arm] = far
        if near == far:
            doubles.append((arm, len(arms[arm]["tiles"]) - 1))
    for arm in open_arms:
        if arm not in arms:
            where = _anchor(arm, doubles)
            arms[arm] = _arm({"arm": where[0], "index": where[1]})
    return {"lead": lead, "arms": arms}


def _anchor(arm: str, doubles: list[tuple[str | None, int]]) -> tuple[str | None, int]:
    k = int(arm[1:] or 1)
    return doubles[k - 1] if k - 1 < len(doubles) else (None, 0)


def _arm(base: dict[str, Any] | None) -> dict[str, Any]:
    return {"tiles": [], "order": [], "closed": False, "from": base}


@pytest.mark.parametrize("variant", sorted(PRESETS))
def test_the_table_is_the_layout_read_tile_by_tile(variant: str) -> None:
    rng = random.Random(f"table {variant}")
    p = PRESETS[variant]
    seen_spinner_side = False
    for seed in range(30):
        match, _ = Match.new(variant, rng.randint(p.min_players, p.max_players), seed=seed)
        rnd = match.round
        while rnd is not None:
            view = match.view(rnd.to_move)
            assert view["table"] == read_layout(view["layout"], list(view["ends"]))
            assert _as_clients_read_it(view["table"]) == _clients_reading(view["layout"])
            assert list(view["table"]["arms"]) == sorted(view["table"]["arms"], key=_arm_order)
            assert public_view(match)["table"] == view["table"]
            seen_spinner_side |= any(a not in ("W", "E") for a in view["table"]["arms"])
            if rnd.over:
                break
            match.apply(rng.choice(match.legal_actions()))
        if match.round is not None and match.round.layout.shape != LINE:
            assert seen_spinner_side or seed < 5


def _arm_order(name: str) -> tuple[int, int]:
    return (int(name[1:] or 1), "NESW".index(name[0]))


def test_before_the_lead_the_table_is_empty() -> None:
    match, _ = Match.new("kozel", 4, seed=1)
    assert match.view(0)["table"] == {"lead": None, "arms": {}}


@pytest.mark.parametrize("variant", sorted(PRESETS))
def test_legal_moves_are_the_legal_actions_structured(variant: str) -> None:
    rng = random.Random(f"legal {variant}")
    p = PRESETS[variant]
    for seed in range(10):
        match, _ = Match.new(variant, rng.randint(p.min_players, p.max_players), seed=seed)
        rnd = match.round
        while rnd is not None and not rnd.over:
            seat = rnd.to_move
            view = match.view(seat)
            assert len(view["legal_moves"]) == len(view["legal"]) and view["legal"]
            for text, move in zip(view["legal"], view["legal_moves"]):
                assert _written(move) == Move.parse(text).text()
            assert match.view((seat + 1) % match.players)["legal_moves"] == []
            assert public_view(match)["legal_moves"] == []
            match.apply(rng.choice(view["legal"]))


def _written(move: dict[str, Any]) -> str:
    """A structured legal move written in the notation, by hand (the reference)."""
    if move["kind"] in ("draw", "pass"):
        assert move["placements"] == []
        return str(move["kind"])
    return "+".join(p["tile"] + (f"@{p['arm']}" if p["arm"] else "") + ("!" if p["closes"] else "")
                    for p in move["placements"])


@pytest.mark.parametrize("options", [{}, {"mighty_duel": True}])
def test_kingdomino_legal_moves_are_the_legal_actions_structured(options: dict[str, Any]) -> None:
    rng = random.Random(f"kd {options}")
    game, _ = Kingdomino.new(2 if options else 3, options, seed=4)
    while not game.game_over:
        view = game.view(game.to_move)
        assert len(view["legal_moves"]) == len(view["legal"])
        for text, move in zip(view["legal"], view["legal_moves"]):
            words = [move["verb"], str(move["tile"])]
            if move["verb"] == "place":
                words += [f"{move['square'][0]},{move['square'][1]}", move["direction"]]
            assert " ".join(words) == text == KingdominoMove.parse(text).text()
        game.apply(rng.choice(view["legal"]))


def _clients_reading(layout: list[str]) -> Any:
    """What clients/table.py's reading of the layout's notation gave before the view said it (its
    ``arms``, kept here as the reference): the lead, the arms that hold a tile as (near, far, closed)
    tiles, and the double each N/S side grows from."""
    lead: tuple[int, int] | None = None
    arms: dict[str, list[tuple[int, int, bool]]] = {}
    doubles: list[tuple[str | None, int]] = []
    anchors: dict[str, tuple[str | None, int]] = {}
    ends: dict[str, int] = {}
    for move in layout:
        for part in move.split("+"):
            found = _PLACED.match(part)
            if found is None:
                continue
            a, b, arm, closed = int(found[1]), int(found[2]), found[3], found[4] == "!"
            if arm is None:
                lead, ends, arms = (a, b), {"W": a, "E": b}, {"W": [], "E": []}
                if a == b:
                    doubles.append((None, 0))
                continue
            if arm not in ends:
                k = int(arm[1:] or 1)
                where = doubles[k - 1] if k - 1 < len(doubles) else (None, 0)
                anchors[arm] = where
                assert lead is not None
                ends[arm] = lead[0] if where[0] is None else arms[where[0]][where[1]][1]
                arms.setdefault(arm, [])
            near = ends[arm]
            laid = (near, b if a == near else a, closed)
            arms.setdefault(arm, []).append(laid)
            ends[arm] = laid[1]
            if laid[0] == laid[1]:
                doubles.append((arm, len(arms[arm]) - 1))
    return lead, arms, anchors


def _as_clients_read_it(table: dict[str, Any]) -> Any:
    """What clients/table.py now reads from the view's table, in that shape."""
    from clients.table import arms
    read = arms(table)
    lead = (read.lead.near, read.lead.far) if read.lead else None
    return lead, {a: [(t.near, t.far, t.closed) for t in tiles] for a, tiles in read.arms.items()}, {
        a: (w[0] or None, w[1]) for a, w in read.anchors.items()}
