"""`domino bench report`: the tables and the plot of docs/performance.md from bench/results/*.json.

The page keeps its hand-written text; only what lies between the markers
``<!-- bench:tables:begin -->`` and ``<!-- bench:tables:end -->`` is rewritten,
and the plot `docs/performance.svg` (throughput and latency percentiles per
service path, and the engine's ratios against its peers) is drawn again. No
plotting library: the SVG is written by hand, so the report needs nothing
beyond the standard library.
"""
from __future__ import annotations

import json
import math
from html import escape
from pathlib import Path
from typing import Any

from bench import bots_report
from bench.compiled import ROOT
from bench.markers import between_markers

Json = dict[str, Any]
BEGIN, END = "<!-- bench:tables:begin -->", "<!-- bench:tables:end -->"
PATH_LABELS = {
    "grpc_health": "gRPC Health/Check",
    "grpc_apply": "gRPC Apply",
    "grpc_health_compiled": "gRPC Health (mypyc engine)",
    "grpc_apply_compiled": "gRPC Apply (mypyc engine)",
    "bare_healthz": "bare Flask /healthz (the floor)",
    "bare_apply": "bare Flask + the sealed Apply call (the hop's floor)",
    "rest_healthz": "REST /healthz",
    "rest_readyz": "REST /readyz",
    "rest_apply_transparent": "REST apply (state)",
    "rest_apply_sealed": "REST apply (sealed)",
}
LABELS = {"ours": "ours, pure Python", "ours_compiled": "ours, mypyc",
          "dominoes": "dominoes (PyPI)", "openspiel": "OpenSpiel"}


def _f(x: Any, digits: int = 0) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:,.{digits}f}"


def engine_tables(r: Json) -> list[str]:
    out = ["### Rules core: random full rounds per second", ""]
    s = r["settings"]
    slice_text = f"{s['slice_seconds']} s" if s.get("slice_seconds") else f"{s.get('slice_games')} games"
    out.append(f"Run {s['started']}, {s['repeats']} interleaved repetitions of one {slice_text} slice per engine, "
               f"{s['cpus']} CPUs, load average before {s['loadavg_before'][0]:.2f}; "
               f"compiled: {s['compiled']['why'] if not s['compiled']['used'] else 'yes, ' + s['compiled']['why']}.")
    out += ["", "| variant | ours, pure | ours, mypyc | peer | pure / peer | mypyc / peer | target |",
            "|---|---:|---:|---:|---:|---:|---|"]
    for name, g in r["groups"].items():
        m = g["members"]
        peer = g.get("peer")
        ratios = g["ratios"]
        pr = ratios.get(f"ours/{peer}") if peer else None
        cr = ratios.get(f"ours_compiled/{peer}") if peer else None
        peer_cell = (f"{_f(m[peer]['games_per_s'])} ({LABELS[peer]})" if peer and peer in m
                     else (g.get("peer_skipped", "–") if peer else "–"))
        target = g.get("target")
        target_cell = "–"
        if target:
            target_cell = (f"≥ {target['ratio']:g}x: pure {'met' if target['met_pure'] else 'not met'}"
                           + ("" if target["met_compiled"] is None else
                              f", mypyc {'met' if target['met_compiled'] else 'not met'}"))
        out.append(
            f"| {name} | {_f(m['ours']['games_per_s'])} | {_f(m.get('ours_compiled', {}).get('games_per_s'))} | "
            f"{peer_cell} | {_f(pr and pr['median'], 2)}{'x' if pr else ''} | "
            f"{_f(cr and cr['median'], 2)}{'x' if cr else ''} | {target_cell} |")
    out += ["", "Games per second are medians over the repetitions; a ratio is the median of the "
            "per-repetition ratios (each from two slices run back to back). Compiled / pure: "
            + ", ".join(f"{n} {_f(g['ratios']['ours_compiled/ours']['median'], 2)}x"
                        for n, g in r["groups"].items() if "ours_compiled/ours" in g["ratios"]) + "."]
    for name, why in r.get("groups_skipped", {}).items():
        out.append(f"Not measured: {name} ({why}).")
    for label, per in r.get("stateless", {}).items():
        out += ["", f"### Cost of statelessness ({LABELS[label]}), microseconds per decision", "",
                ("| variant | proto encode | proto decode | JSON encode | JSON decode | "
                 "decision in process | proto round trip / decision | JSON round trip / decision |"),
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name, x in per.items():
            pr = x["proto_roundtrip_per_decision"]
            out.append(f"| {name} | {_f(x['proto_encode_us'], 1)} | {_f(x['proto_decode_us'], 1)} | "
                       f"{x['json_encode_us']:.1f} | {x['json_decode_us']:.1f} | {x['decision_us']:.2f} | "
                       f"{'–' if pr is None else f'{pr:.0f}x'} | {x['json_roundtrip_per_decision']:.0f}x |")
    per = r.get("stateless", {}).get("ours", {})
    if per:
        out += ["", "### Sizes of a mid-round state (median over the sampled rounds)", "",
                "| variant | protobuf bytes (max) | compact JSON bytes |",
                "|---|---:|---:|"]
        for name, x in per.items():
            proto = ("– (no wire form yet)" if x["mid_round_proto_bytes"] is None
                     else f"{x['mid_round_proto_bytes']} ({x['mid_round_proto_bytes_max']})")
            out.append(f"| {name} | {proto} | {x['mid_round_json_bytes']} |")
    return out


def service_tables(r: Json) -> list[str]:
    out = ["### Service: throughput at saturation, latency at half of it", ""]
    if "all" in r.get("skipped", {}):
        return out + [f"Not measured: {r['skipped']['all']}."]
    s = r["settings"]
    behind = {"engine0": "the pure Python engine", "engine0-compiled": "the compiled engine"}.get(
        r.get("rest_engine", "engine0"), r.get("rest_engine"))
    out.append(f"Run {s['started']}, {s['repeats']} interleaved saturation runs of {s['seconds']:g} s per path, "
               f"{s['cpus']} CPUs, load average before {s['loadavg_before'][0]:.2f}; the REST paths go "
               f"through the gateway to {behind}.")
    out += ["", "| path | req/s at saturation | runs | load at half | req/s done | p50 ms | p90 ms | p99 ms |",
            "|---|---:|---|---|---:|---:|---:|---:|"]
    for name, p in r["paths"].items():
        lat = r["latency"].get(name, {})
        out.append(f"| {PATH_LABELS.get(name, name)} | {_f(p.get('saturation_req_per_s'))} | "
                   f"{', '.join(_f(x) for x in p.get('saturation_runs', []))} | {lat.get('tool', '–')} | "
                   f"{_f(lat.get('req_per_s'))} | {_f(lat.get('p50_ms'), 2)} | {_f(lat.get('p90_ms'), 2)} | "
                   f"{_f(lat.get('p99_ms'), 2)} |")
    out += ["", "| comparison | ratio (median) | min | max | target |", "|---|---:|---:|---:|---|"]
    bars = r.get("targets", {})  # the run's own bars (bench.service.TARGETS), not a copy of them
    # A ratio with a bar of its own name has it; the compiled engine's gRPC ratio has the pure one's.
    named = {**{key: key for key in r["ratios"]}, "grpc_apply_compiled/grpc_health_compiled": "grpc_apply/grpc_health"}
    targets = {key: f"≥ {bars[bar]:.2f}" for key, bar in named.items() if bar in bars}
    for key, ratio in r["ratios"].items():
        out.append(f"| {key} | {ratio['median']:.2f} | {ratio['min']:.2f} | {ratio['max']:.2f} | "
                   f"{targets.get(key, '–')} |")
    if "scale_out" in r:
        so = r["scale_out"]
        out.append(f"| two engines / one behind the gateway ({so['path']}: {_f(so['two_engines_req_per_s'])} vs "
                   f"{_f(so['one_engine_req_per_s'])} req/s) | {so['ratio']['median']:.2f} | "
                   f"{so['ratio']['min']:.2f} | {so['ratio']['max']:.2f} | – |")
    checks = r.get("checks", {})
    if checks:
        out += ["", "Checks: " + "; ".join(
            f"{name} {c['value']:.3f} against {c['target']}: {'met' if c['met'] else 'NOT met'}"
            for name, c in checks.items()) + "."]
    sizes = r.get("sizes", {})
    req = r["paths"].get("grpc_apply", {}).get("request_bytes")
    if sizes or req:
        out += ["", f"Request sizes for the mid-round 4-player Kozel state: gRPC ApplyRequest {req} bytes; "
                f"sealed token {sizes.get('kozel4_mid_round_sealed_token_chars', '–')} "
                "characters; the REST bodies "
                + ", ".join(f"{PATH_LABELS[k]} {v['request_bytes']} bytes" for k, v in r["paths"].items()
                            if k.startswith("rest_apply")) + "."]
    return out


# ---------------------------------------------------------------- the plot


def _bar_panel(x0: float, y0: float, w: float, title: str, rows: list[tuple[str, list[float]]],
               series: list[str], colors: list[str], unit: str, log: bool = False,
               marker: float | None = None, marker_label: str = "",
               row_targets: list[float | None] | None = None) -> tuple[list[str], float]:
    """Horizontal grouped bars; returns SVG elements and the panel's height."""
    bar, gap, label_w = 11.0, 8.0, 190.0
    n = len(series)
    h = 28 + len(rows) * (n * bar + gap) + 30
    els = [f'<text x="{x0}" y="{y0 + 14}" font-size="13" font-weight="bold">{escape(title)}</text>']
    values = ([v for _, vs in rows for v in vs if v and v > 0] + ([marker] if marker else [])
              + [t for t in (row_targets or []) if t])
    if not values:
        return els, h
    vmax = max(values) * 1.08
    vmin = min(values) / 2 if log else 0.0
    span = w - label_w - 60

    def xpos(v: float) -> float:
        if log:
            return x0 + label_w + span * (math.log10(max(v, vmin)) - math.log10(vmin)) / (
                math.log10(vmax) - math.log10(vmin))
        return x0 + label_w + span * v / vmax

    y = y0 + 26
    for k, (label, vs) in enumerate(rows):
        target = row_targets[k] if row_targets else None
        if target:
            xt = xpos(target)
            els.append(f'<line x1="{xt:.1f}" y1="{y - 3}" x2="{xt:.1f}" y2="{y + n * bar + 1}" stroke="#c00" '
                       f'stroke-width="2"/>')
            els.append(f'<text x="{xt + 3:.1f}" y="{y - 1}" font-size="9" fill="#c00">target {target:g}x</text>')
        els.append(f'<text x="{x0 + label_w - 6}" y="{y + n * bar / 2 + 4}" font-size="11" '
                   f'text-anchor="end">{escape(label)}</text>')
        for i, v in enumerate(vs):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            x1 = xpos(v)
            els.append(f'<rect x="{x0 + label_w}" y="{y + i * bar}" width="{max(x1 - x0 - label_w, 1):.1f}" '
                       f'height="{bar - 2}" fill="{colors[i]}"/>')
            els.append(f'<text x="{x1 + 3:.1f}" y="{y + i * bar + bar - 3}" font-size="9">'
                       f'{_f(v, 2 if v < 10 else 0)}</text>')
        y += n * bar + gap
    if marker:
        xm = xpos(marker)
        els.append(f'<line x1="{xm:.1f}" y1="{y0 + 22}" x2="{xm:.1f}" y2="{y}" stroke="#c00" '
                   f'stroke-dasharray="4,3"/>')
        els.append(f'<text x="{xm - 3:.1f}" y="{y + 10}" font-size="9" fill="#c00" '
                   f'text-anchor="end">{escape(marker_label)}</text>')
    lx = x0 + label_w
    for i, name in enumerate(series):
        els.append(f'<rect x="{lx}" y="{y + 16}" width="10" height="10" fill="{colors[i]}"/>')
        els.append(f'<text x="{lx + 14}" y="{y + 25}" font-size="10">{escape(name)}</text>')
        lx += 14 + 7 * len(name) + 14
    els.append(f'<text x="{x0 + w - 4}" y="{y + 25}" font-size="10" text-anchor="end">{escape(unit)}</text>')
    return els, h


def plot(engine: Json | None, service: Json | None) -> str:
    width = 980
    els: list[str] = []
    y = 10.0
    if service and "all" not in service.get("skipped", {}):
        names = [n for n in PATH_LABELS if n in service["paths"]]
        rows_t = [(PATH_LABELS[n], [service["paths"][n].get("saturation_req_per_s", float("nan"))]) for n in names]
        rows_l = [(PATH_LABELS[n], [service["latency"].get(n, {}).get(k, float("nan"))
                                    for k in ("p50_ms", "p90_ms", "p99_ms")]) for n in names]
        a, ha = _bar_panel(10, y, 470, "Throughput at saturation", rows_t, ["requests per second"],
                           ["#3465a4"], "req/s")
        b, hb = _bar_panel(500, y, 470, "Latency at half of saturation", rows_l, ["p50", "p90", "p99"],
                           ["#73d216", "#edd400", "#cc0000"], "ms (log scale)", log=True, marker=10.0,
                           marker_label="10 ms (REST p99 target)")
        els += a + b
        y += max(ha, hb) + 10
    if engine:
        rows = []
        targets: list[float | None] = []
        for name, g in engine["groups"].items():
            peer = g.get("peer")
            if peer and f"ours/{peer}" in g["ratios"]:
                targets.append(g.get("target", {}).get("ratio"))
                rows.append((f"{name} vs {LABELS[peer]}", [g["ratios"][f"ours/{peer}"]["median"],
                                                          g["ratios"].get(f"ours_compiled/{peer}", {}).get(
                                                              "median", float("nan"))]))
        if rows:
            c, hc = _bar_panel(10, y, 960, "Rules core: games per second, ours / peer (same run, interleaved)",
                               rows, ["pure Python", "mypyc-compiled"], ["#75507b", "#f57900"], "ratio",
                               row_targets=targets)
            els += c
            y += hc
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y + 10:.0f}" '
            f'font-family="DejaVu Sans, Arial, sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n'
            + "\n".join(els) + "\n</svg>\n")


def stream_tables(r: Json) -> list[str]:
    """`domino bench tables`: a move to the other seat's stream, open streams' memory, turn clocks
    (bench/tables.py)."""
    out = ["### Online tables: a move to the other seat's stream", "",
           f"`{r.get('command', 'domino bench tables')}`: a Kozel table of two people and two greedy bots, "
           f"{r['moves_per_setup']} applies by match id per setup, each timed from sending the apply to the update "
           "with its `seq` on the other person's Server-Sent Events stream. Gateways run two workers each.", "",
           "| setup | p50 ms | p99 ms | worst ms |", "|---|---:|---:|---:|"]
    for name, label in (("one_gateway", "one gateway, SQLite store"),
                        ("two_gateways", "apply on gateway A, stream from gateway B, one Redis")):
        m = r[name]
        out.append(f"| {label} | {m['p50_ms']} | {m['p99_ms']} | {m['max_ms']} |")
    out += ["", f"p50 two gateways / one: x{r['p50_two_over_one']} (same run). A change wakes at once the workers "
            "whose streams watch its match, and no other: through Redis a message on the match's channel, on one "
            "host a datagram to each watching worker's socket (docs/design.md, \"Hosting\")."]
    m = r.get("memory")
    if m:
        rss = m["rss_kib"]
        out += ["", f"{m['streams']} seat streams held by one gateway worker: its RSS {rss['before']} KiB before, "
                f"{rss['held']} KiB with them open ({m['kib_per_stream']} KiB a stream), {rss['after_move']} KiB "
                f"after a move reached {m['updated']} of them, {rss['closed']} KiB once all were closed."]
    if "clocks_one_gateway" in r:
        out += ["", "### Turn clocks: from a deadline to the timeout on a stream", "",
                f"{r['clock_tables']} tables per setup with a 5 s move clock whose seat to move never moves; "
                "nobody calls: each gateway worker's clock keeper sleeps until the earliest deadline and applies "
                "each clock that ran out. Time from the "
                "deadline to the timeout's update on the other person's stream.", "",
                "| setup | p50 ms | p99 ms | worst ms |", "|---|---:|---:|---:|"]
        for name, label in (("clocks_one_gateway", "one gateway, SQLite store"),
                            ("clocks_two_gateways", "two gateways on one Redis")):
            c = r[name]
            out.append(f"| {label} | {c['p50_ms']} | {c['p99_ms']} | {c['max_ms']} |")
    return out


def write_report(root: Path = ROOT) -> list[Path]:
    results = root / "bench" / "results"
    engine = json.loads((results / "engine.json").read_text()) if (results / "engine.json").exists() else None
    service = json.loads((results / "service.json").read_text()) if (results / "service.json").exists() else None
    streams = json.loads((results / "tables.json").read_text()) if (results / "tables.json").exists() else None
    lines: list[str] = []
    if engine:
        lines += engine_tables(engine) + [""]
    if service:
        lines += service_tables(service) + [""]
    if streams:
        lines += stream_tables(streams) + [""]
    block = "\n".join([BEGIN, "", *lines, END])
    doc = root / "docs" / "performance.md"
    text = doc.read_text() if doc.exists() else f"# Performance\n\n{BEGIN}\n{END}\n"
    doc.write_text(between_markers(text, BEGIN, END, block))
    svg = root / "docs" / "performance.svg"
    svg.write_text(plot(engine, service))
    return [doc, svg, *bots_report.write_report(root)]
