"""Match records (issue 18, docs/records.md): a versioned notation for domino games, every variant.

>>> from engine_service.rules import Match
>>> match, _ = Match.new("block", 2, seed=5)
>>> while not match.round.over:
...     _ = match.apply(match.legal_actions()[0])
>>> record = export(match)                      # the full record; export(match, "seat 0") a seat's
>>> text = to_text(record)
>>> replay(from_text(text)).to_dict() == match.to_dict()
True
"""
from __future__ import annotations

from .model import FORMAT, VERSION, Entry, Record, RecordError, from_json, from_text, parse, to_json, to_text
from .play import check, export, replay

__all__ = ["FORMAT", "VERSION", "Entry", "Record", "RecordError", "check", "export", "from_json", "from_text",
           "parse", "replay", "to_json", "to_text"]
