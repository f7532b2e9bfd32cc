"""Replace a marked block in a generated document (docs/performance.md, docs/bots.md).

Owned here, not by `report` or `bots_report`, so that both can use it without importing each other.
"""
from __future__ import annotations


def between_markers(text: str, begin: str, end: str, block: str) -> str:
    """`text` with what lies from `begin` to `end` replaced by `block` (appended when the markers are missing)."""
    if begin in text and end in text:
        return text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    return text.rstrip("\n") + "\n\n" + block + "\n"
