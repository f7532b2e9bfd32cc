"""`domino bench service`: engine and gateway as real processes under load (being written)."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def run(seconds: float = 10.0, tiny: bool = False, require_tools: bool = False) -> dict[str, Any]:
    raise SystemExit("bench service: not implemented yet")


def format_text(result: dict[str, Any]) -> str:  # pragma: no cover
    return ""


def save(result: dict[str, Any], path: Path) -> None:  # pragma: no cover
    pass
