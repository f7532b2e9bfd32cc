"""Opaque page cursors: where the next page of a list starts (keyset pagination).

A cursor is ``base64url(JSON [list, scope..., key...])``: the list it belongs to
(``"leaderboard"`` of a family and order, ``"matches"`` of a player), then the
keyset of the last item sent. A page never shifts when rows are added: the next
one starts strictly after that key. A cursor that does not decode, or belongs to
another list, is `BadCursor` (400).
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

import orjson

MAX_CHARS = 512


class BadCursor(ValueError):
    """The cursor was not made by this list's previous page."""


def encode(scope: Sequence[Any], key: Sequence[Any]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps([*scope, *key])).rstrip(b"=").decode()


def decode(text: str, scope: Sequence[Any], types: Sequence[type]) -> list[Any]:
    """The key of a cursor made for `scope`, its members of `types` (BadCursor otherwise)."""
    try:
        if len(text) > MAX_CHARS:
            raise ValueError
        value = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (ValueError, binascii.Error):
        raise BadCursor("cursor: not a cursor of this list (use the `next` of the previous page)") from None
    n = len(scope)
    if not isinstance(value, list) or value[:n] != list(scope) or len(value) != n + len(types):
        raise BadCursor("cursor: made for another list (use the `next` of the previous page of this one)")
    key = value[n:]
    for item, kind in zip(key, types):
        ok = isinstance(item, (int, float)) and not isinstance(item, bool) if kind is float else (
            isinstance(item, kind) and not isinstance(item, bool))
        if not ok:
            raise BadCursor("cursor: garbled (use the `next` of the previous page)")
    return [float(item) if kind is float else item for item, kind in zip(key, types)]
