"""Hosted tournaments (issue 41): the service seats every round's tables itself (docs/tournaments.md).

`install` is called once by the app factory (`api_gateway.app.create_app`) with the worker's hosting."""
from __future__ import annotations

from typing import Any

from flask import Flask


def install(app: Flask, tables: Any, archive: Any, store: Any, watching: Any) -> None:
    """Wire the hosted tournaments into this worker's app (extensions, keepers); nothing yet."""
