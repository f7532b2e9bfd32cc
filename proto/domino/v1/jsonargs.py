"""The JSON face's arguments: a JSON object nested at most `MAX_DEPTH` levels.

`domino.v1.JsonEngine` takes its arguments as JSON (engine.proto, "the JSON
face"), and the REST gateway forwards request bodies there. No body of the API
nests deeper than six levels (a transparent state); anything far deeper is
hostile input, refused by both sides before anything reads it (deep nesting
costs nothing to send and a stack to take apart). Part of the contract package,
so the engine and the gateway check the same limit with the same code.

>>> too_deep([[[]]], limit=3), too_deep([[[[]]]], limit=3)
(False, True)
"""
from __future__ import annotations

from typing import Any

__all__ = ["MAX_DEPTH", "too_deep"]

#: Deeper than any argument of the API, far below any stack limit.
MAX_DEPTH = 32


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` (parsed JSON: dicts, lists, scalars) nests more than `limit` levels; no recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if type(item) is dict else item if type(item) is list else ()
        for child in children:
            if type(child) is dict or type(child) is list:
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False
