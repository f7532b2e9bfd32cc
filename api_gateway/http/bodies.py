"""Request bodies: read once, by orjson, and bounded before anything else looks at them.

A body is a JSON object of a few levels (the deepest, a transparent state, is
six), but a client may send anything: JSON nested a thousand levels, an integer
of thousands of digits, a lone surrogate in a string. The standard json module
turns the first into a RecursionError (a 500) and keeps the others; here:

- orjson parses (C code, no recursion limit reached by any body the size limit
  lets in) and refuses invalid UTF-8, lone surrogates and numbers that do not
  fit a double (an integer of thousands of digits);
- nesting deeper than `MAX_DEPTH` is refused (the contract's limit, `domino.v1.jsonargs`,
  which the engine's JSON face checks too);

each as `BodyError`, a 400 `malformed-json` problem naming what is wrong. An
integer beyond 64 bits becomes a float, which every integer field refuses (422).
"""
from __future__ import annotations

from typing import Any

import flask
import orjson
from domino.v1.jsonargs import MAX_DEPTH, too_deep
from flask_smorest import Blueprint as SmorestBlueprint  # type: ignore[import-untyped]
from webargs import core
from webargs.flaskparser import FlaskParser, is_json_request

__all__ = ["MAX_DEPTH", "BodyError", "BodyParser", "Blueprint", "parse"]

class BodyError(ValueError):
    """The body is not JSON the gateway accepts (says why)."""


def parse(data: bytes | str) -> Any:
    """The JSON value of a request body; `BodyError` when it is not JSON or nests too deep."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BodyError(str(exc)) from None
    if too_deep(value):
        raise BodyError(f"nested deeper than {MAX_DEPTH} levels")
    return value


class BodyParser(FlaskParser):
    """webargs' Flask parser reading JSON bodies through `parse`."""

    def _raw_load_json(self, req: flask.Request) -> Any:
        if not is_json_request(req):
            return core.missing
        data = req.get_data(cache=True)
        if not data:
            return core.missing  # no body: the schema's required fields say what is missing (422)
        try:
            return parse(data)
        except BodyError as exc:
            self._handle_invalid_json_error(exc, req)  # type: ignore[arg-type]  # abort(400): malformed-json


class Blueprint(SmorestBlueprint):  # type: ignore[misc]  # flask-smorest is untyped
    """flask-smorest's Blueprint reading request bodies through `BodyParser` (set before any route uses it)."""

    ARGUMENTS_PARSER = BodyParser()
