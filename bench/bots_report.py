"""The bots' table and plot in docs/bots.md, from bench/results/bots.jsonl (`domino bench report`).

Every `domino bench bots` run appends one line per matchup to the history
`bench/results/bots.jsonl`. The report shows, for each matchup (what was
played, the variant, the players, level A, level B), its latest run: the bots
change and their budgets are retuned, so the latest run is the one that
describes the code; the history keeps the earlier ones. Only
the text between ``<!-- bench:bots:begin -->`` and ``<!-- bench:bots:end -->``
is rewritten; the plot `docs/bots.svg` (A's rate with its 95% interval per
matchup, against the even-share line) is drawn by hand like docs/performance.svg.
"""
from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from bench.compiled import ROOT
from bench.markers import between_markers

Json = dict[str, Any]
BEGIN, END = "<!-- bench:bots:begin -->", "<!-- bench:bots:end -->"
UNITS = {"matching": "rounds", "matching-match": "matches", "kingdomino": "games"}


def latest_runs(history: Path) -> list[Json]:
    """The latest run of each matchup in the history, by family (RULES.md's order), then levels."""
    latest: dict[tuple[Any, ...], Json] = {}
    if history.exists():
        for line in history.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                latest[(r["kind"], r["variant"], r.get("players", 2), bool(r.get("teams")), r["a"], r["b"])] = r
    order = ["kozel", "kozel-classic", "osel", "bykovo", "threes-fives", "fives-and-threes", "all-threes",
             "all-fives", "block", "kingdomino"]
    strength = {"expert": 0, "prior": 1, "greedy": 2, "random": 3}
    return sorted(latest.values(), key=lambda r: (
        order.index(r["variant"]) if r["variant"] in order else len(order), r.get("players", 2),
        bool(r.get("teams")), strength.get(r["a"], 4), strength.get(r["b"], 4), r["b"], r["kind"]))


def even_share(r: Json) -> float:
    """A's rate when the levels are equal: 1/2 with two sides, 1/4 for one player of four."""
    sides = r.get("sides") or (r.get("players", 2) if r["variant"] in ("kingdomino", "bykovo") else 2)
    return 1 / int(sides)


def _budget(r: Json) -> str:
    """The iterations per decision: a number, or the level's default (with its value when recorded)."""
    if r["budget"] == "default" and r.get("default_budget") and r["a"] == "expert":
        return f"default ({r['default_budget']})"
    return str(r["budget"])


def _ms(a: Any, b: Any) -> str:
    return "–" if a is None else f"{a:,.1f} / {b:,.1f}"


def table(runs: list[Json]) -> list[str]:
    lines = ["| variant | players | A vs B | budget | played | A's rate | Wilson 95% | paired 95% | "
             "median / p99 wall (ms) | median / p99 CPU (ms) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        lines.append(
            f"| {r['variant']} | {r.get('players', 2)}{' (teams)' if r.get('teams') else ''} | "
            f"{r['a']} vs {r['b']} | {_budget(r)} | "
            f"{r['games']:,} {UNITS.get(r['kind'], '')} | **{r['rate']:.3f}** | "
            f"{r['wilson95'][0]:.3f}-{r['wilson95'][1]:.3f} | {r['paired95'][0]:.3f}-{r['paired95'][1]:.3f} | "
            f"{_ms(r.get('a_median_ms'), r.get('a_p99_ms'))} | {_ms(r.get('a_cpu_median_ms'), r.get('a_cpu_p99_ms'))} |")
    return lines


def plot(runs: list[Json]) -> str:
    """A's rate per matchup: a bar, the Wilson interval as a whisker, the even share as a red tick."""
    width, label_w, bar, gap = 900, 330, 12, 8
    span = width - label_w - 40
    els = ['<text x="10" y="20" font-size="13" font-weight="bold">'
           "Bots: level A's rate against level B (95% Wilson interval; red: an even share)</text>"]
    y = 36.0

    def x(v: float) -> float:
        return label_w + span * v

    for r in runs:
        label = (f"{r['variant']} {r.get('players', 2)}p{' teams' if r.get('teams') else ''} {r['a']} vs {r['b']} "
                 f"({r['games']:,} {UNITS.get(r['kind'], '')})")
        lo, hi = r["wilson95"]
        els += [
            f'<text x="{label_w - 6}" y="{y + bar - 2}" font-size="11" text-anchor="end">{escape(label)}</text>',
            f'<rect x="{label_w}" y="{y}" width="{max(x(r["rate"]) - label_w, 1):.1f}" height="{bar}" '
            f'fill="#3465a4"/>',
            f'<line x1="{x(lo):.1f}" y1="{y + bar / 2}" x2="{x(hi):.1f}" y2="{y + bar / 2}" stroke="black"/>',
            f'<line x1="{x(lo):.1f}" y1="{y + 2}" x2="{x(lo):.1f}" y2="{y + bar - 2}" stroke="black"/>',
            f'<line x1="{x(hi):.1f}" y1="{y + 2}" x2="{x(hi):.1f}" y2="{y + bar - 2}" stroke="black"/>',
            f'<line x1="{x(even_share(r)):.1f}" y1="{y - 2}" x2="{x(even_share(r)):.1f}" y2="{y + bar + 2}" '
            f'stroke="#c00" stroke-width="2"/>',
            f'<text x="{x(hi) + 4:.1f}" y="{y + bar - 2}" font-size="10">{r["rate"]:.3f}</text>',
        ]
        y += bar + gap
    for v in (0, 0.25, 0.5, 0.75, 1):
        els += [f'<line x1="{x(v):.1f}" y1="30" x2="{x(v):.1f}" y2="{y}" stroke="#bbb" stroke-dasharray="2,3"/>',
                f'<text x="{x(v):.1f}" y="{y + 14}" font-size="10" text-anchor="middle">{v:g}</text>']
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y + 24:.0f}" '
            f'font-family="DejaVu Sans, Arial, sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n'
            + "\n".join(els) + "\n</svg>\n")


def write_report(root: Path = ROOT) -> list[Path]:
    """Rewrite docs/bots.md's table and docs/bots.svg from the history; nothing when there is none."""
    runs = latest_runs(root / "bench" / "results" / "bots.jsonl")
    doc = root / "docs" / "bots.md"
    if not runs or not doc.exists():
        return []
    block = "\n".join([BEGIN, "", *table(runs), "", "![the bots' rates](bots.svg)", "", END])
    doc.write_text(between_markers(doc.read_text(), BEGIN, END, block))
    svg = root / "docs" / "bots.svg"
    svg.write_text(plot(runs))
    return [doc, svg]
