"""Every operation's documented example works as Swagger UI prefills it, against a real gateway.

The examples are real requests made with the rules (`python -m clients.openapi_examples`,
kept in api_gateway/http/openapi_examples.json because the gateway imports nothing of the
engine): the file must be what that module makes now, and each example, read back from
the live /openapi.json, must be answered 2xx.
"""
from __future__ import annotations

from typing import Any

import pytest

from clients import openapi_examples

from .conftest import Gateway

pytestmark = pytest.mark.service


def test_the_examples_file_is_what_the_rules_make_now() -> None:
    assert openapi_examples.TARGET.read_text() == openapi_examples.render(), \
        "run: python -m clients.openapi_examples"


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in document["paths"].items() for method, op in item.items()
            if method in ("get", "post")]


def test_every_documented_example_is_accepted_as_prefilled(gateway: Gateway) -> None:
    document = gateway.get("/openapi.json").json
    posted = []
    for path, method, op in _operations(document):
        if method != "post" or "{" in path:
            continue  # a path naming a resource (a table, a live match) cannot be prefilled: tests/gateway/test_tables.py
        media = op["requestBody"]["content"]["application/json"]
        assert media.get("examples"), f"{path}: no example for Swagger UI to prefill"
        for name, example in media["examples"].items():
            reply = gateway.post(path, example["value"])
            assert 200 <= reply.status < 300, (path, name, reply.status, reply.body[:500])
            posted.append((path, name))
    assert len(posted) >= 20
    assert {name for _, name in posted} >= {"kozel", "kingdomino"}

