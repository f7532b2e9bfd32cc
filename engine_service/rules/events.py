"""The shape of what the rules report: an event is a JSON object with a "type".

Kept in a module of its own, below everything else in the package, so that the
round, the families, the match and Kingdomino can all name the type without
importing one another (the rules' imports form a tree: tests/rules/test_import_tree.py).
"""
from __future__ import annotations

from typing import Any

#: One thing that happened ("played", "round_ended", "match_ended", ...; docs/rest.md lists them).
Event = dict[str, Any]

__all__ = ["Event"]
