"""Just enough PromQL handling for the live checks: split an alert into signal and
threshold, find the metric names a query selects, fill in Grafana's variables."""
from __future__ import annotations

import re

_COMPARISONS = (">=", "<=", "==", "!=", ">", "<")
_SELECTOR = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{")
_KEYWORDS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
                       "and", "or", "unless", "offset"})


def split_comparison(expr: str) -> tuple[str, str, str] | None:
    """(signal, operator, threshold) of the last comparison at the top level, or None."""
    depth = 0
    quote = ""
    found: tuple[int, str] | None = None
    i = 0
    while i < len(expr):
        ch = expr[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'`":
            quote = ch
        elif ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif depth == 0:
            for op in _COMPARISONS:
                if expr.startswith(op, i) and not expr.startswith("=~", i) and not expr.startswith("!~", i):
                    found = (i, op)
                    i += len(op) - 1
                    break
        i += 1
    if found is None:
        return None
    at, op = found
    return expr[:at].strip(), op, expr[at + len(op):].strip()


def metric_names(expr: str) -> set[str]:
    """Names of the series a query selects (every selector here has braces)."""
    return {name for name in _SELECTOR.findall(expr) if name not in _KEYWORDS}


GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__interval": "15s", "$__range": "5m",
                     "$namespace": ".*", "${namespace}": ".*"}


def fill(expr: str) -> str:
    """A dashboard query with Grafana's variables as they are for "All" over the last minutes."""
    for name in sorted(GRAFANA_VARIABLES, key=len, reverse=True):
        expr = expr.replace(name, GRAFANA_VARIABLES[name])
    return expr
