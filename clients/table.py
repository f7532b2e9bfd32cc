"""What a table shows, as text: the layout as the tiles lie, a sorted hand, the score table, events,
a Kingdomino kingdom as a grid. Used by `domino play` (clients/play.py); the browser table
(api_gateway/play/play.js) draws the same reading of a view.

The layout is drawn from the view's `table` (docs/rest.md): the arms as the tiles lie, each tile
`[near, far]` with its near half touching the tile before it, doubles crosswise, and the spinners
(the doubles a side `N`/`S`, `Nk`/`Sk` grows from) named. The engine works it out, so nothing here
reads the notation of `layout` again.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from clients.i18n import t

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Laid:
    """A tile on the table: `near` touches what it was laid against, `far` is the new open end."""

    near: int
    far: int
    closed: bool = False   # Osel: a double that closed its arm

    @property
    def double(self) -> bool:
        return self.near == self.far

    def text(self, reverse: bool = False) -> str:
        a, b = (self.far, self.near) if reverse else (self.near, self.far)
        return f"[{a}:{b}]" + ("!" if self.closed else "") if self.double else f"[{a}|{b}]"


@dataclass(slots=True)
class Arms:
    lead: Laid | None = None
    arms: dict[str, list[Laid]] = field(default_factory=dict)
    #: The spinner each N/S arm grows from: ("", 0) is the lead, (arm, index) a tile on an arm.
    anchors: dict[str, tuple[str, int]] = field(default_factory=dict)


def arms(table: Json) -> Arms:
    """A view's `table` as `Laid` tiles by arm, outward from the lead: W and E, and the arms that
    hold a tile (an open side with none yet is not drawn)."""
    out = Arms()
    if table.get("lead") is None:
        return out
    near, far = table["lead"]
    out.lead = Laid(near, far)
    for name, line in table["arms"].items():
        if not line["tiles"] and name not in ("W", "E"):
            continue
        last = len(line["tiles"]) - 1
        out.arms[name] = [Laid(n, f, line["closed"] and i == last) for i, (n, f) in enumerate(line["tiles"])]
        base = line["from"]
        if base is not None:
            out.anchors[name] = (base["arm"] or "", base["index"])
    return out


def _tile(table: Arms, where: tuple[str, int]) -> Laid:
    arm, index = where
    if not arm:
        assert table.lead is not None
        return table.lead
    return table.arms[arm][index]


def _arm_order(name: str) -> tuple[int, str]:
    return (int(name[1:] or 1), name[0])


def layout_lines(view_table: Json) -> list[str]:
    """The line W .. lead .. E in reading order, then each spinner's N and S arms; spinners are `*starred*`."""
    table = arms(view_table)
    if table.lead is None:
        return [t("table.empty")]
    spinners = set(table.anchors.values())

    def text(arm: str, index: int, reverse: bool = False) -> str:
        shown = _tile(table, (arm, index)).text(reverse)
        return f"*{shown}*" if (arm, index) in spinners else shown

    west = [text("W", i, reverse=True) for i in reversed(range(len(table.arms.get("W", []))))]
    east = [text("E", i) for i in range(len(table.arms.get("E", [])))]
    line = " ".join([*west, text("", 0), *east])
    lines = [f"W  {line}  E"]
    for name in sorted((n for n in table.arms if n not in ("W", "E")), key=_arm_order):
        anchor = table.anchors.get(name, ("", 0))
        base = text(*anchor)
        tiles = " ".join(laid.text() for laid in table.arms[name]) or t("table.arm-empty")
        lines.append(f"{name:<3}{t('table.from')} {base}: {tiles}")
    return lines


def tile_key(tile: str) -> tuple[int, int]:
    a, _, b = tile.partition("-")
    return (min(int(a), int(b)), max(int(a), int(b)))


def sorted_hand(hand: list[str]) -> list[str]:
    return sorted(hand, key=tile_key)


# ------------------------------------------------------------------ scores

def side_names(count: int, names: list[str]) -> list[str]:
    """Who a list of `count` points is for: the seats' names, or the teams (seats 0+2, 1+3)."""
    return names if count == len(names) else [t("team", i + 1) for i in range(count)]


def points_text(points: list[int], names: list[str]) -> str:
    """Points of each seat (or team) as a person reads them: "You 0, Seat 1 12, Seat 2 3"."""
    return ", ".join(f"{side} {value}" for side, value in zip(side_names(len(points), names), points))


def keep_rounds(kept: dict[int, Json], view: Json) -> list[Json]:
    """The match's score table so far, a row per finished round, in order. A state keeps the last
    round's row only (a call's cost must not grow with the match), so the caller keeps every row it
    has seen in `kept` (updated here); a view with no row is a match that has finished no round yet."""
    rows = view.get("ledger", {}).get("history")
    if rows is not None:
        if not rows:
            kept.clear()
        kept.update((row["number"], row) for row in rows)
    return [kept[n] for n in sorted(kept)]


def ledger_lines(view: Json, names: list[str], rows: list[Json] | None = None) -> list[str]:
    """The score table: one line per round played (`rows`, default the view's own), then the totals
    (written and remembered points, the eggs pot and fish markers where the variant has them)."""
    ledger = view.get("ledger", {})
    scores = ledger.get("scores", [])
    sides = side_names(len(scores), names)
    kozel_like = view.get("variant", "").startswith(("kozel", "osel"))
    width = max(8, *(len(n) for n in sides))
    labels = [t("ledger.round"), t("ledger.score"), t("ledger.remember")]
    first = max(9, *(len(label) + 1 for label in labels))   # the column of the rows' labels
    header = labels[0].ljust(first) + "".join(f"{n:>{width + 1}}" for n in sides)
    lines = [header]
    for record in ledger.get("history", []) if rows is None else rows:
        ending = record["ending"]
        marker = f" {t('ledger.' + ending)}" if ending in ("fish", "blocked", "sortir") else ""
        row = "".join(f"{v:>{width + 1}}" for v in record["scores"])
        if record.get("pot"):
            marker += " " + t("ledger.eggs", record["pot"])
        lines.append(f"{record['number']:<{first}}{row}{marker}")
    lines.append(labels[1].ljust(first) + "".join(f"{v:>{width + 1}}" for v in scores))
    if kozel_like:
        lines.append(labels[2].ljust(first) + "".join(f"{v:>{width + 1}}" for v in ledger.get("remembered", [])))
        if ledger.get("pot"):
            lines.append(t("ledger.pot", ledger["pot"]))
    return lines


# ------------------------------------------------------------------ Kingdomino

TERRAIN_LETTERS = {"wheat": "W", "forest": "F", "lake": "L", "grassland": "G", "swamp": "S", "mine": "M"}


def kingdom_lines(grid: list[Json]) -> list[str]:
    """A kingdom as a text grid, north up: `F1` forest with one crown, `##` the castle, `..` free."""
    squares = {(s["x"], s["y"]): s for s in grid}
    xs = [x for x, _ in squares] + [0]
    ys = [y for _, y in squares] + [0]
    lines = []
    for y in range(max(ys) + 1, min(ys) - 2, -1):
        row = []
        for x in range(min(xs) - 1, max(xs) + 2):
            s = squares.get((x, y))
            if (x, y) == (0, 0):
                row.append("##")
            elif s is None:
                row.append("..")
            else:
                row.append(TERRAIN_LETTERS[s["terrain"]] + (str(s["crowns"]) if s["crowns"] else " "))
        lines.append(" ".join(row))
    return lines


def kingdomino_tile_text(number: int) -> str:
    """`17 F|L1`: the tile's number, then its two squares (terrain letter, crowns)."""
    from engine_service.rules.kingdomino_tiles import (
        FIRST_CROWNS,
        FIRST_TERRAIN,
        SECOND_CROWNS,
        SECOND_TERRAIN,
        TERRAINS,
    )

    def square(terrain: int, crowns: int) -> str:
        return TERRAIN_LETTERS[TERRAINS[terrain]] + (str(crowns) if crowns else "")

    return (f"{number} {square(FIRST_TERRAIN[number], FIRST_CROWNS[number])}|"
            f"{square(SECOND_TERRAIN[number], SECOND_CROWNS[number])}")


# ------------------------------------------------------------------ events

def event_line(event: Json, names: list[str]) -> str | None:
    """One event as a sentence (None for those a player need not read)."""
    kind = event["type"]
    who = names[event["seat"]] if "seat" in event and event["seat"] is not None else ""
    player = names[event["player"]] if event.get("player") is not None else ""
    if kind == "played":
        return t("ev.played", who, event["action"])
    if kind == "drew":
        return t("ev.drew", who, event["tile"]) if event.get("tile") else t("ev.drew-one", who)
    if kind == "passed":
        return t("ev.knocked", who)
    if kind == "points_scored":
        return t("ev.scored", who, event["points"])
    if kind == "round_ended":
        record = event["record"]
        return t("ev.round-over", record["number"], t("ev.how", record["ending"]),
                 points_text(record["round_points"], names))
    if kind == "match_ended":
        losers = ", ".join(names[s] for s in event.get("losers", []) if s < len(names))
        return t("ev.match-over-losing", losers) if losers else t("ev.match-over")
    if kind == "round_dealt":
        return t("ev.dealt-leads", event["number"], names[event["leader"]]) if event.get(
            "leader") is not None else t("ev.dealt", event["number"])
    if kind == "tile_picked":
        return t("ev.picked", player, event["tile"])
    if kind == "tile_placed":
        square = event["square"]
        where = f"{square[0]},{square[1]}" if isinstance(square, list) else square
        return t("ev.placed", player, event["tile"], where, event["direction"])
    if kind == "tile_discarded":
        return t("ev.discarded", player, event["tile"])
    if kind == "row_laid":
        return t("ev.row", ", ".join(map(str, event["tiles"])))
    if kind == "game_over":
        return t("ev.game-over", points_text(event["scores"], names), ", ".join(names[w] for w in event["winners"]))
    if kind == "dynasty_over":
        return t("ev.dynasty-over", points_text(event["scores"], names),
                 ", ".join(names[w] for w in event["winners"]))
    if kind == "timed_out":
        return t("ev.timed-out", player or who)
    if kind in ("resigned", "aborted", "gone"):    # the exits of a match (docs/tables.md)
        return t(f"ev.{kind}", player or who)
    return None


# ------------------------------------------------------------------ clocks and ratings

def clock_text(seconds: float) -> str:
    """`4:05`, `0:09`, `1:02:00`: whole seconds rounded up (a clock shows 0:00 only once it ran out)."""
    whole = max(0, math.ceil(seconds - 1e-9))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def seconds_left(clocks: Json, seat: int, since: float, now_wall: float) -> float:
    """A seat's time left now, from a line's `clocks` (docs/tables.md, Clocks) read `since` seconds ago: the
    running seat's `remaining` less that, and never more than its `deadline` less the wall clock (a line read
    late, after a reconnect); a stopped seat's `remaining` as given."""
    left = float(clocks["remaining"][seat])
    if clocks.get("running") != seat:
        return left
    left -= since
    if clocks.get("deadline") is not None:
        left = min(left, float(clocks["deadline"]) - now_wall)
    return max(0.0, left)


def clocks_line(clocks: Json, names: list[str], since: float, now_wall: float, over: bool = False) -> str:
    """`clocks: You 0:10, Seat 1 (Boris) 0:07 (running), ...`: every seat's time left, the running one marked
    (and the seats a bot plays on since their time ran out)."""
    parts = []
    for seat, name in enumerate(names):
        text = f"{name} {clock_text(seconds_left(clocks, seat, since, now_wall))}"
        if clocks.get("running") == seat and not over:
            text += t("clocks.running")
        if seat in clocks.get("autopilot", []):
            text += t("clocks.autopilot")
        parts.append(text)
    return t("clocks", ", ".join(parts))


def clock_setting_text(setting: Json | None) -> str:
    """`10 s a move` or `5 min + 5 s a move`, and what happens when it runs out."""
    if not setting:
        return t("clock.none")
    if setting.get("move") is not None:
        kind = t("clock.move", f"{setting['move']:g}")
    else:
        kind = t("clock.bank", clock_text(float(setting["bank"])), f"{setting.get('increment', 0):g}")
    rule = (t("clock.rule") if setting.get("on_timeout", "rule") == "rule"
            else t("clock.autopilot", setting.get("autopilot_level", "greedy")))
    return t("clock.setting", kind, rule)


def skill_text(ordinal: float) -> str:
    """A skill rating's ordinal as shown beside a name: one decimal."""
    return f"{ordinal:.1f}"


def rating_of(player: Json | None, family: str) -> str:
    """`rating 3.4` from `GET /v1/players/{id}` (the family's skill ordinal), `rating: new` for none yet."""
    found = next((r for r in (player or {}).get("ratings", []) if r.get("family") == family), None)
    return t("rating.new") if found is None else t("rating.of", skill_text(found["skill"]["ordinal"]))


def rating_change_lines(archived: Json, names: list[str], family: str) -> list[str]:
    """Each player's rating before and after a match, from `GET /v1/matches/{id}/record`:
    `You: 0.0 -> 3.4 (+3.4), +1 rating points, place 1`."""
    lines = []
    for s in archived.get("seats", []):
        if not s.get("player"):
            continue
        before = (s.get("skill_before") or {}).get("ordinal", 0.0)
        after = (s.get("skill_after") or {}).get("ordinal", before)
        delta = after - before
        points = t("rating.points", s["points"]) if family == "K" else ""
        lines.append(t("rating.change", names[s["seat"]], skill_text(before), skill_text(after),
                       f"{'+' if delta >= 0 else '-'}{skill_text(abs(delta))}", points, s["place"]))
    return lines


def player_name(entry: Json) -> str:
    """A leaderboard entry's player: the name the archive keeps, else its id (a guest's shortened)."""
    if entry.get("name"):
        return str(entry["name"])
    player = str(entry["player"])
    return f"guest {player[6:12]}" if player.startswith("guest:") else player.removeprefix("app:")


def leaderboard_lines(page: Json) -> list[str]:
    """A page of `GET /v1/leaderboard`: `  1. Anna        rating 3.4   2 matches, 1 win, 9 rating points`."""
    lines = []
    for e in page.get("items", []):
        extra = (f", {e['points']} rating points" if e.get("points") else "") + (
            ", provisional" if e.get("provisional") else "")  # fewer than 5 rated matches
        wins = f"{e['wins']} win{'' if e['wins'] == 1 else 's'}"
        matches = f"{e['matches']} match{'' if e['matches'] == 1 else 'es'}"
        lines.append(f"{e['rank']:>4}. {player_name(e):<20} rating {skill_text(e['skill']['ordinal']):>6}   "
                     f"{matches}, {wins}{extra}")
    return lines
